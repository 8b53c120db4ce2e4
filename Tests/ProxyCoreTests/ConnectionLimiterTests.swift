import DomainMatch
import Testing

@testable import ProxyCore

@Suite struct ConnectionLimiterTests {
    @Test func countsPerClientUpToTheLimit() {
        let limiter = ConnectionLimiter()
        let one = IPAddress("10.0.0.1")!
        let two = IPAddress("10.0.0.2")!
        #expect(limiter.acquire(one, limit: 2))
        #expect(limiter.acquire(one, limit: 2))
        #expect(!limiter.acquire(one, limit: 2))
        #expect(limiter.acquire(two, limit: 2), "another client has its own count")
        limiter.release(one)
        #expect(limiter.acquire(one, limit: 2))
        #expect(limiter.openConnections(of: one) == 2)
        #expect(limiter.acquire(one, limit: 0), "0 is no limit")
        for _ in 0..<5 { limiter.release(one) }
        #expect(limiter.openConnections(of: one) == 0)
    }
}
