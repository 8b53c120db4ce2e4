import EventLoop
import Glibc
import Synchronization
import SystemIO
import TestSupport

/// Runs `body` with a started group and always shuts it down.
func withLoops<R>(_ count: Int = 1, clock: any Clock = SystemClock(), _ body: (EventLoopGroup) throws -> R) throws -> R
{
    // SIGPIPE is deliberately not ignored here (that would leak into every process the
    // shared test runner spawns): sends use MSG_NOSIGNAL and loop threads block it.
    let group = try EventLoopGroup(loopCount: count, name: "test-loop", clock: clock)
    defer { group.shutdownGracefully() }
    return try body(group)
}

extension EventLoop {
    /// `runSync` with the tests' time bound.
    @discardableResult
    func sync<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        try runSync(timeout: testTimeout, body)
    }
}

/// Waits until `descriptor` is ready for `events` (POLLIN/POLLOUT), at most `timeout`.
func waitReady(_ descriptor: Int32, _ events: Int32, timeout: Nanoseconds = testTimeout) -> Bool {
    var entry = pollfd(fd: descriptor, events: Int16(events), revents: 0)
    return poll(&entry, 1, Int32(timeout / 1_000_000)) > 0
}

/// The byte at `offset` of test stream number `seed`: position-dependent, so a lost,
/// repeated or reordered chunk shows.
@inline(__always)
func patternByte(_ offset: Int, seed: Int) -> UInt8 {
    UInt8(truncatingIfNeeded: (offset &* 131) ^ (offset >> 9) &+ seed)
}

func loopback(_ family: SocketAddress.Family = .ipv4) -> SocketAddress {
    try! SocketAddress(family == .ipv4 ? "127.0.0.1:0" : "[::1]:0")
}
