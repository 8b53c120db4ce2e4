/// The bytes one tunnel moved in the current minute of the wall clock
/// (docs/services.md#minutes-online): a connection that only keeps itself alive (a push
/// channel, a chat's heartbeat) moves a few hundred bytes a minute and is not someone
/// using the device; a page, a feed or a video moves far more than `threshold`.
struct OnlineMeter: Sendable, Equatable {
    static let threshold: UInt64 = 8 * 1024

    private var minute: Int64 = .min
    private var inMinute: UInt64 = 0
    private var lastTotal: UInt64 = 0
    private var counted = false

    /// Takes the relay's running total at `wallClock` (unix seconds): `moved` when bytes
    /// moved since the last call, `online` once a minute, when that minute's bytes pass the
    /// threshold.
    mutating func note(total: UInt64, wallClock: Int64) -> (moved: Bool, online: Bool) {
        let delta = total >= lastTotal ? total - lastTotal : 0
        lastTotal = total
        let now = wallClock >= 0 ? wallClock / 60 : (wallClock - 59) / 60
        if now != minute {
            minute = now
            inMinute = 0
            counted = false
        }
        inMinute &+= delta
        guard !counted, inMinute > Self.threshold else { return (delta > 0, false) }
        counted = true
        return (true, true)
    }
}
