import SystemIO

/// One reading of the daemon's two clocks for the sync thread, in milliseconds.
/// `monotonic` paces everything that waits — polls and full fetches, backoffs, `Retry-After`
/// holds, request budgets, the report, flush and heartbeat intervals — so a wall-clock step
/// (NTP, a board that boots in 1970 and then learns the date) neither fires a request early
/// nor starves one. `wall` (Unix) only stamps what is stored or sent: last sync and error
/// times, `reported_at`, hit batches, the activity hour.
public struct SyncTime: Sendable, Equatable {
    /// Milliseconds on the monotonic clock (`Clock.now()`); meaningful only as differences.
    public var monotonic: Int64
    /// Unix milliseconds.
    public var wall: Int64

    public init(monotonic: Int64, wall: Int64) {
        self.monotonic = monotonic
        self.wall = wall
    }

    /// Both clocks, now.
    public init(_ clock: any Clock) {
        monotonic = Int64(clock.now() / 1_000_000)
        wall = clock.wall().unixMilliseconds
    }

    /// Unix seconds, rounded down.
    public var wallSeconds: Int64 { wall >= 0 ? wall / 1000 : -((-wall + 999) / 1000) }

    /// The wall-clock time (Unix milliseconds) of the monotonic instant `instant`, as the
    /// clocks stand now: for storing when something scheduled will happen or began.
    public func wall(atMonotonic instant: Int64) -> Int64 { wall + (instant - monotonic) }

    /// The monotonic instant of the wall-clock time `instant` (Unix milliseconds), as the
    /// clocks stand now: for a time read back from the store.
    public func monotonic(atWall instant: Int64) -> Int64 { monotonic + (instant - wall) }
}
