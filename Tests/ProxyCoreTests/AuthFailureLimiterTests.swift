import DomainMatch
import Testing

@testable import ProxyCore

@Suite struct AuthFailureLimiterTests {
    static let second: UInt64 = 1_000_000_000
    static let minute = 60 * second
    let one = IPAddress("192.168.1.20")!
    let two = IPAddress("192.168.1.21")!
    let three = IPAddress("fd00::3")!

    /// Ten failures are answered (407); the eleventh attempt within the minute is refused
    /// for the rest of it, then the client starts again.
    @Test func tenFailuresAMinuteThenTooMany() {
        let limiter = AuthFailureLimiter()
        let start = 5 * Self.minute
        for attempt in 0..<10 {
            let now = start + UInt64(attempt) * Self.second
            #expect(limiter.check(one, now: now) == .allowed, "attempt \(attempt + 1)")
            limiter.recordFailure(one, now: now)
        }
        #expect(limiter.check(one, now: start + 10 * Self.second) == .tooMany(retryAfter: 50 * Self.second))
        #expect(limiter.check(one, now: start + Self.minute - 1) == .tooMany(retryAfter: 1))
        #expect(limiter.check(two, now: start + 10 * Self.second) == .allowed, "another address has its own count")
        #expect(limiter.check(one, now: start + Self.minute) == .allowed, "the minute is over")
        limiter.recordFailure(one, now: start + Self.minute)
        #expect(limiter.check(one, now: start + Self.minute + 1) == .allowed, "a new window, one failure in it")
    }

    /// The window opens with the first failure: failures spread over more than a minute
    /// never add up to ten.
    @Test func theWindowStartsWithTheFirstFailure() {
        let limiter = AuthFailureLimiter()
        for attempt in 0..<9 { limiter.recordFailure(one, now: UInt64(attempt) * Self.second) }
        limiter.recordFailure(one, now: Self.minute + Self.second)
        #expect(limiter.check(one, now: Self.minute + 2 * Self.second) == .allowed)
        limiter.recordFailure(one, now: 0)  // a time before the window began counts as its start
        #expect(limiter.check(one, now: Self.minute + 2 * Self.second) == .allowed)
    }

    @Test func limitsAreSettable() {
        let limiter = AuthFailureLimiter(maxFailures: 2, window: 10 * Self.second)
        limiter.recordFailure(one, now: 0)
        #expect(limiter.check(one, now: 1) == .allowed)
        limiter.recordFailure(one, now: 1)
        #expect(limiter.check(one, now: 2) == .tooMany(retryAfter: 10 * Self.second - 2))
        #expect(limiter.check(one, now: 10 * Self.second) == .allowed)
    }

    /// A full table drops windows that are over first, then the oldest.
    @Test func memoryIsBounded() {
        let limiter = AuthFailureLimiter(capacity: 2)
        for _ in 0..<10 { limiter.recordFailure(one, now: 0) }
        for _ in 0..<10 { limiter.recordFailure(two, now: 30 * Self.second) }
        limiter.recordFailure(three, now: 61 * Self.second)
        #expect(limiter.trackedCount == 2)
        #expect(
            limiter.check(two, now: 61 * Self.second) == .tooMany(retryAfter: 29 * Self.second), "still in its window")
        #expect(limiter.check(one, now: 61 * Self.second) == .allowed)

        let full = AuthFailureLimiter(capacity: 2)
        for _ in 0..<10 { full.recordFailure(one, now: 0) }
        for _ in 0..<10 { full.recordFailure(two, now: Self.second) }
        full.recordFailure(three, now: 2 * Self.second)
        #expect(full.trackedCount == 2)
        #expect(full.check(one, now: 3 * Self.second) == .allowed, "the oldest was dropped")
        #expect(full.check(two, now: 3 * Self.second) == .tooMany(retryAfter: 58 * Self.second))
        for index in 0..<1000 {
            full.recordFailure(IPAddress("10.0.\(index / 256).\(index % 256)")!, now: 3 * Self.second)
        }
        #expect(full.trackedCount == 2)
    }
}
