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

    /// docs/proxy.md#proxy-authentication: checks for one user from ever new addresses:
    /// ten go ahead, then each waits for a turn twice as far from the one before, and one
    /// whose turn is more than 8 s away is refused without taking it. Another user has its
    /// own count.
    @Test func aUsersChecksFromManyAddressesWaitForTurnsThatComeLaterEachTime() {
        let limiter = AuthFailureLimiter()
        func guess(_ index: Int, at now: UInt64, user: String = "kid") -> AuthFailureLimiter.Verdict {
            let address = IPAddress("10.0.\(index / 256).\(index % 256)")!
            return limiter.check(address, user: user, device: .address(address), now: now)
        }
        for index in 0..<10 { #expect(guess(index, at: 0) == .allowed, "check \(index + 1)") }
        #expect(guess(10, at: 0) == .delayed(by: Self.second))
        #expect(guess(11, at: 0) == .delayed(by: 3 * Self.second))
        #expect(guess(12, at: 0) == .delayed(by: 7 * Self.second))
        #expect(guess(13, at: 0) == .tooMany(retryAfter: 15 * Self.second), "its turn is more than 8 s away")
        #expect(guess(14, at: 7 * Self.second) == .delayed(by: 8 * Self.second), "the refusal took no turn")
        #expect(guess(15, at: 7 * Self.second) == .tooMany(retryAfter: 24 * Self.second))
        #expect(guess(16, at: 0, user: "ann") == .allowed, "another user")
        // The turns grow to a minute apart, and the count is forgotten after 15 quiet minutes.
        #expect(guess(20, at: 31 * Self.second) == .allowed, "its turn")
        #expect(guess(21, at: 62 * Self.second) == .delayed(by: Self.second), "32 s later")
        #expect(guess(22, at: 123 * Self.second) == .allowed, "60 s later, the most")
        #expect(guess(23, at: 123 * Self.second) == .tooMany(retryAfter: Self.minute))
        #expect(guess(24, at: 183 * Self.second) == .allowed)
        #expect(guess(30, at: 183 * Self.second + 15 * Self.minute) == .allowed)
    }

    /// A device that has logged in as a user skips the user's turns and its /64's count,
    /// for a week; its own address's count still holds it.
    @Test func aKnownDeviceSkipsTheUsersTurnsAndItsNetworksCount() {
        let limiter = AuthFailureLimiter()
        let mac = MACAddress("02:00:00:00:00:01")!
        let phone = IPAddress("2001:db8:1::10")!
        limiter.recordSuccess(user: "kid", device: .mac(mac), now: 0)
        for index in 0..<30 {
            let guesser = IPAddress("2001:db8:1::\(String(0x100 + index, radix: 16))")!
            _ = limiter.check(guesser, user: "kid", device: .address(guesser), now: Self.second)
            limiter.recordFailure(guesser, now: Self.second)
        }
        let stranger = IPAddress("2001:db8:1::99")!
        #expect(
            limiter.check(stranger, user: "kid", device: .address(stranger), now: 2 * Self.second)
                == .tooMany(retryAfter: 59 * Self.second), "30 failures from the /64")
        #expect(limiter.check(phone, user: "kid", device: .mac(mac), now: 2 * Self.second) == .allowed)
        #expect(
            limiter.check(phone, user: "ann", device: .mac(mac), now: 2 * Self.second)
                == .tooMany(retryAfter: 59 * Self.second), "known for kid only")
        let week: UInt64 = 7 * 24 * 60 * Self.minute
        var known = KnownLoginDevices()
        known.insert(user: "kid", device: .mac(mac), now: 0)
        #expect(known.contains(user: "kid", device: .mac(mac), now: week - 1))
        #expect(!known.contains(user: "kid", device: .mac(mac), now: week), "forgotten after a week")
        #expect(!known.contains(user: "kid", device: .address(phone), now: 0))
        for _ in 0..<10 { limiter.recordFailure(phone, now: week + 2) }
        limiter.recordSuccess(user: "kid", device: .mac(mac), now: week + 2)
        #expect(
            limiter.check(phone, user: "kid", device: .mac(mac), now: week + 3)
                == .tooMany(retryAfter: Self.minute - 1), "its own address's count")
    }

    /// A full table of users drops those not yet waiting for turns first: made-up names
    /// cannot push out a user under attack.
    @Test func madeUpUsersCannotPushOutAUserWaitingForTurns() {
        var users = UserLoginDelays(capacity: 4)
        for _ in 0..<10 { _ = users.turn(for: "kid", now: 0) }
        #expect(users.turn(for: "kid", now: 0) == .delayed(by: Self.second))
        for index in 0..<100 { _ = users.turn(for: "made-up-\(index)", now: UInt64(index + 1)) }
        #expect(users.turn(for: "kid", now: 200) == .delayed(by: 3 * Self.second - 200), "kid's turns still run")
    }

    @Test func aLoginDeviceIsItsMACElseItsWholeAddress() {
        let mapped = IPAddress("::ffff:192.168.1.20")!
        #expect(LoginDevice(mapped, mac: nil) == .address(one))
        let mac = MACAddress("02:00:00:00:00:01")!
        #expect(LoginDevice(three, mac: mac) == .mac(mac))
        #expect(LoginDevice(three, mac: nil) == .address(three))
    }
}
