import Bytes
import DomainMatch
import Policy
import Synchronization
import Testing

@testable import ProxyCore

/// A proxy login whose password is not remembered is checked off the loop thread
/// (docs/proxy.md#proxy-authentication): the machine holds the request in
/// `authenticating`, asks for `.checkLogin`, and goes on when the outcome comes back.
@Suite struct LoginCheckTests {
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    let second: UInt64 = 1_000_000_000
    /// `alice` / `secret`, `Basic YWxpY2U6c2VjcmV0`.
    let credentials = "Proxy-Authorization: Basic YWxpY2U6c2VjcmV0\r\n"

    /// A fixture whose logins know alice's password; `remembered` says whether the quick
    /// check already knows it. `checks` counts the full checks run.
    func fixture(remembered: Bool, checks: Counter = Counter()) -> ProxyFixture {
        var fixture = ProxyFixture()
        fixture.settings.logins = ProxyLogins(
            remembered: { user, password in remembered && user == "alice" && password == Array("secret".utf8) },
            check: { user, password in
                checks.value.add(1, ordering: .relaxed)
                return user == "alice" && password == Array("secret".utf8)
            })
        return fixture
    }

    func env(_ fixture: ProxyFixture, _ limiter: AuthFailureLimiter, now: UInt64 = 1_000_000_000) -> ProxyEnvironment {
        ProxyEnvironment(
            snapshot: fixture.snapshot, settings: fixture.settings, now: now, wallClock: ProxyFixture.noon,
            authLimiter: limiter)
    }

    @Test func anUnrememberedLoginWaitsForItsCheckThenGoesOnAsItsUser() throws {
        let fixture = fixture(remembered: false)
        let limiter = AuthFailureLimiter()
        var connection = fixture.connection()
        let actions = connection.receive(
            "CONNECT example.org:443 HTTP/1.1\r\n\(credentials)\r\n", env(fixture, limiter))
        guard case .checkLogin(let login)? = actions.first, actions.count == 1 else {
            Issue.record("expected one checkLogin, got \(actions)")
            return
        }
        #expect(login.user == "alice")
        #expect(!connection.wantsClientBytes)
        #expect(connection.clientOut.readableBytes == 0)
        #expect(connection.proxyUser == nil, "not until the check says so")
        // The check runs (here, by hand) and its outcome comes back.
        #expect(login.run() == .accepted)
        let next = connection.loginChecked(.accepted, env(fixture, limiter))
        #expect(
            next == [
                .lookup(HostQuery(name: try QueryName.parse("example.org"), profile: fixture.profile(), inspect: true))
            ])
        #expect(connection.proxyUser == "alice")
    }

    @Test func aRememberedLoginGoesOnAtOnce() {
        let checks = Counter()
        let fixture = fixture(remembered: true, checks: checks)
        var connection = fixture.connection()
        let actions = connection.receive(
            "CONNECT example.org:443 HTTP/1.1\r\n\(credentials)\r\n", env(fixture, AuthFailureLimiter()))
        #expect(actions.count == 1)
        #expect(actions.allSatisfy { if case .lookup = $0 { return true } else { return false } })
        #expect(connection.proxyUser == "alice")
        #expect(checks.value.load(ordering: .relaxed) == 0)
    }

    @Test func aRejectedLoginIs407AndCountsAsAFailure() {
        let fixture = fixture(remembered: false)
        let limiter = AuthFailureLimiter(maxFailures: 1)
        var connection = fixture.connection()
        // Basic YWxpY2U6d3Jvbmc= is alice:wrong.
        let actions = connection.receive(
            "CONNECT example.org:443 HTTP/1.1\r\nProxy-Authorization: Basic YWxpY2U6d3Jvbmc=\r\n\r\n",
            env(fixture, limiter))
        guard case .checkLogin(let login)? = actions.first else {
            Issue.record("expected checkLogin, got \(actions)")
            return
        }
        #expect(login.run() == .rejected)
        #expect(connection.loginChecked(.rejected, env(fixture, limiter)) == [])
        #expect(connection.takeClientOutput().hasPrefix("HTTP/1.1 407 Proxy Authentication Required\r\n"))
        #expect(connection.state == .closing)
        #expect(connection.proxyUser == nil)
        if case .allowed = limiter.check(ProxyFixture.client, now: second) {
            Issue.record("the failure was not counted")
        }
    }

    @Test func aBusyWorkerIs503AndNotAFailure() {
        let fixture = fixture(remembered: false)
        let limiter = AuthFailureLimiter(maxFailures: 1)
        var connection = fixture.connection()
        _ = connection.receive("GET http://example.org/ HTTP/1.1\r\n\(credentials)\r\n", env(fixture, limiter))
        #expect(connection.loginChecked(.busy, env(fixture, limiter)) == [.dropUpstream])
        #expect(connection.takeClientOutput().hasPrefix("HTTP/1.1 503 "))
        #expect(limiter.check(ProxyFixture.client, now: second) == .allowed)
    }

    @Test func aCheckThatNeverAnswersEndsAt503AndALateAnswerIsIgnored() {
        let fixture = fixture(remembered: false)
        let limiter = AuthFailureLimiter()
        var connection = fixture.connection()
        _ = connection.receive("CONNECT example.org:443 HTTP/1.1\r\n\(credentials)\r\n", env(fixture, limiter))
        let deadline = connection.deadline ?? 0
        #expect(deadline == second + ProxyLimits.headTimeout)
        #expect(connection.deadlinePassed(env(fixture, limiter, now: deadline)) == [.dropUpstream])
        #expect(connection.takeClientOutput().hasPrefix("HTTP/1.1 503 "))
        #expect(connection.loginChecked(.accepted, env(fixture, limiter, now: deadline + 1)) == [])
        #expect(connection.proxyUser == nil)
    }

    /// A second request pipelined behind the first waits in `clientIn` and is read once the
    /// first has gone on (here: refused with a block page on keep-alive).
    @Test func aPipelinedRequestWaitsForTheLoginOfTheOneBeforeIt() {
        let fixture = fixture(remembered: false)
        let limiter = AuthFailureLimiter()
        var connection = fixture.connection()
        let first = "GET http://www.reddit.com/ HTTP/1.1\r\nHost: www.reddit.com\r\n\(credentials)\r\n"
        let second = "GET http://www.reddit.com/r HTTP/1.1\r\nHost: www.reddit.com\r\n\(credentials)\r\n"
        let actions = connection.receive(first + second, env(fixture, limiter))
        #expect(actions.count == 1)
        #expect(connection.clientIn.readableBytes == second.utf8.count)
        // The first is blocked (a hit); the second asks for its own check (not remembered).
        let next = connection.loginChecked(.accepted, env(fixture, limiter))
        #expect(next.hits.count == 1)
        #expect(next.contains { if case .checkLogin = $0 { return true } else { return false } })
        #expect(connection.takeClientOutput().hasPrefix("HTTP/1.1 403 "))
    }
}
