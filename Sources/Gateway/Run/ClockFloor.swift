import CSystem
import EventLoop
import Glibc
import SystemIO

/// A board without a battery-backed clock (a Raspberry Pi) boots at an old time until NTP
/// sets it (docs/operations.md#a-clock-without-rtc). `run` writes the wall time to
/// `STATE/clock-floor` every minute; at the next start, a clock behind that floor is
/// taken as not yet set: the wall clock reads as the floor plus the time since the start
/// until the real clock passes it (so downtime and schedules are judged at a sensible
/// hour, not in 1970), and the validity period of DNS-over-TLS certificates is not
/// checked — only that — until the kernel reports the clock synchronised or it passes
/// the floor (so DNS, and with it NTP, works at boot).
package final class FlooredClock: Clock {
    let base: any Clock
    /// The persisted floor when the clock started behind it; nil when it did not.
    let floor: WallTime?
    private let startedAt: Nanoseconds
    /// The kernel's view is not the one tests inject (`PHOSRA_GATE_TEST_CLOCK`): with an
    /// injected clock, it counts as never synchronised.
    private let kernelKnows: Bool

    static let fileName = "clock-floor"

    init(base: any Clock, stateDirectory: String, kernelKnows: Bool) {
        self.base = base
        self.kernelKnows = kernelKnows
        startedAt = base.now()
        let persisted = Self.read(stateDirectory)
        floor = persisted.flatMap { base.wall() < $0 ? $0 : nil }
    }

    package func now() -> Nanoseconds { base.now() }

    package func watchSteps() -> Int32? { base.watchSteps() }

    package func stopWatchingSteps(_ descriptor: Int32) { base.stopWatchingSteps(descriptor) }

    package func wall() -> WallTime {
        let real = base.wall()
        guard let floor else { return real }
        let floorNow = floor.advanced(by: Int64(base.now() &- startedAt))
        return real < floorNow ? floorNow : real
    }

    /// Whether certificate validity periods cannot be judged yet: the clock started behind
    /// the floor, has not passed it, and the kernel does not call it synchronised.
    var unsynchronised: Bool {
        guard let floor else { return false }
        if !(base.wall() < floor.advanced(by: Int64(base.now() &- startedAt))) { return false }
        return !(kernelKnows && Self.kernelSynchronised())
    }

    /// adjtimex(2): synchronised unless the kernel says STA_UNSYNC or TIME_ERROR.
    static func kernelSynchronised() -> Bool {
        var status: Int32 = 0
        let state = cs_clock_state(&status)
        return state >= 0 && state != CS_TIME_ERROR && status & CS_STA_UNSYNC == 0
    }

    static func read(_ stateDirectory: String) -> WallTime? {
        guard let bytes = try? Files.read(stateDirectory + "/" + fileName, limit: 64),
            let seconds = Int64(String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace })
        else { return nil }
        return WallTime(unixSeconds: seconds)
    }

    /// The floor moves forward only: a clock stepped back never lowers it.
    static func write(_ stateDirectory: String, _ time: WallTime) {
        if let previous = read(stateDirectory), time < previous { return }
        try? Files.writeAtomically(stateDirectory + "/" + fileName, Array("\(time.unixSeconds)\n".utf8), mode: 0o600)
    }
}
