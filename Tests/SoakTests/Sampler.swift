import Foundation
import Locks

/// What /proc says of the daemon at one moment.
struct ProcSample: Sendable {
    enum Phase: String, Sendable {
        case warmUp = "warm-up"
        case load, quiet, drain
    }

    /// Seconds since the load started.
    let time: Double
    let phase: Phase
    /// VmRSS and VmHWM, in bytes.
    let resident: Int
    let peak: Int
    /// Entries of /proc/PID/fd, and `Threads:`.
    let openFiles: Int
    let threads: Int

    static func read(pid: Int32, time: Double, phase: Phase) -> ProcSample? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let files = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        else { return nil }
        func field(_ name: String) -> Int? {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }.flatMap { Int($0.filter(\.isNumber)) }
        }
        guard let resident = field("VmRSS"), let peak = field("VmHWM"), let threads = field("Threads") else {
            return nil
        }
        return ProcSample(
            time: time, phase: phase, resident: resident * 1024, peak: peak * 1024, openFiles: files.count,
            threads: threads)
    }

    var line: String {
        "t=\(String(format: "%5.0f", time))s \(phase.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) rss="
            + "\(megabytes(resident)) hwm=\(megabytes(peak)) fds=\(openFiles) threads=\(threads)"
    }
}

func megabytes(_ bytes: Int) -> String { String(format: "%.1fMB", Double(bytes) / 1_048_576) }

/// Prints soak output at once, unbuffered (stdout is a pipe under `swift test`).
func report(_ line: String) {
    FileHandle.standardOutput.write(Data(("soak: " + line + "\n").utf8))
}

/// Samples the daemon every `SoakSettings.sampleInterval` on a thread of its own and prints
/// one line per sample, with the load's counters.
final class Sampler: @unchecked Sendable {
    private let pid: Int32
    private let ledger: SoakLedger
    private let start: Double
    private let state = Lock((phase: ProcSample.Phase.warmUp, samples: [ProcSample](), stopped: false))
    private let done = DispatchSemaphore(value: 0)

    init(pid: Int32, ledger: SoakLedger, start: Double) {
        self.pid = pid
        self.ledger = ledger
        self.start = start
    }

    var phase: ProcSample.Phase {
        get { state.withLock { $0.phase } }
        set { state.withLock { $0.phase = newValue } }
    }

    var samples: [ProcSample] { state.withLock { $0.samples } }

    func run() {
        Thread { [self] in
            var next = start + SoakSettings.sampleInterval
            while !state.withLock({ $0.stopped }) {
                let now = monotonicSeconds()
                if now < next {
                    usleep(UInt32(min(0.2, next - now) * 1_000_000))
                    continue
                }
                next += SoakSettings.sampleInterval
                guard let sample = take() else { continue }
                state.withLock { $0.samples.append(sample) }
                report(sample.line + "  " + ledger.summary)
            }
            done.signal()
        }.start()
    }

    /// One sample now (also between the periodic ones, for the quiet points).
    func take(_ phase: ProcSample.Phase? = nil) -> ProcSample? {
        ProcSample.read(pid: pid, time: monotonicSeconds() - start, phase: phase ?? self.phase)
    }

    func stop() {
        state.withLock { $0.stopped = true }
        done.wait()
    }
}
