import Bytes
import DomainMatch
import Policy
import TestFixtures
import Testing

@testable import ProxyCore

/// Connections the firewall redirected to the transparent listener
/// (docs/network.md#transparent-mode), driven by hand: no CONNECT, no `200`, the server
/// name (or the `Host`) decided for the client's profile, the original destination reached
/// without a lookup, hits with the source `transparent`.
@Suite struct TransparentTests {
    let fixture = ProxyFixture()
    let second: UInt64 = 1_000_000_000
    let destination = Endpoint(.v4(0xCB00_710A), port: 443)  // 203.0.113.10

    func redirected(_ fixture: ProxyFixture? = nil, port: UInt16 = 443) -> ProxyConnection {
        .redirected(
            client: ProxyFixture.client, arrivedOn: ProxyFixture.arrivedOn,
            destination: Endpoint(destination.address, port: port), now: second)
    }

    @Test func anAllowedNameGoesToTheOriginalDestinationWithItsHelloFirst() {
        var connection = redirected()
        #expect(connection.deadline == second + ProxyLimits.inspectTimeout)
        let hello = TLSClientHello.record(serverName: "example.org")
        #expect(connection.receive(hello, fixture.env()) == [.connect(destination)], "no lookup, no 200")
        #expect(connection.connected(fixture.env()) == [.relay])
        #expect(connection.clientOut.readableBytes == 0)
        #expect(connection.upstreamOut.readableBytes == hello.count)
        #expect(connection.tunnel?.serverName == (try? QueryName.parse("example.org")))
    }

    /// A connection the firewall sent here whose destination is the gateway itself (its
    /// parent's page on 8443, say) is refused like a proxy request to it: never connected.
    @Test func theGatewayItselfIsNeverTheDestination() {
        var own = fixture
        own.settings.ownAddresses = [destination.address]
        for port: UInt16 in [443, 8443] {
            var connection = redirected(port: port)
            let actions = connection.receive(TLSClientHello.record(serverName: "gate.example"), own.env())
            #expect(!actions.contains { if case .connect = $0 { true } else { false } }, "port \(port)")
            #expect(
                connection.clientOut.getBytes(at: connection.clientOut.readerIndex, length: 7)
                    == ProxyResponse.accessDeniedAlert, "port \(port)")
            #expect(actions.hits.isEmpty, "not a policy decision")
        }
    }

    @Test func aBlockedNameGetsAnAccessDeniedAlertAndAHit() {
        var connection = redirected()
        let actions = connection.receive(TLSClientHello.record(serverName: "www.reddit.com"), fixture.env())
        #expect(actions.hits.map(\.reasonText) == ["blocked_domain:reddit.com"])
        #expect(actions.hits.first?.source == .transparent)
        #expect(actions.hits.first?.name == "www.reddit.com")
        #expect(
            connection.clientOut.getBytes(at: connection.clientOut.readerIndex, length: 7)
                == ProxyResponse.accessDeniedAlert)
        #expect(connection.state == .closing)
        #expect(connection.upstreamOut.readableBytes == 0)
    }

    @Test func aHelloWithoutANameIsDecidedAsAnIPLiteral() {
        var refused = redirected()
        let actions = refused.receive(TLSClientHello.record(serverName: nil), fixture.env())
        #expect(actions.hits.map(\.reasonText) == ["ip_literal"])
        #expect(actions.hits.first?.name == "203.0.113.10")
        var allowed = fixture
        allowed.settings.allowIPConnect = true
        var connection = redirected()
        #expect(connection.receive(TLSClientHello.record(serverName: nil), allowed.env()) == [.connect(destination)])
    }

    @Test func unreadableBytesFailClosedForAFilteredProfileAndPassOtherwise() {
        var filtered = redirected()
        let actions = filtered.receive("GET / HTTP/1.1\r\n", fixture.env())
        #expect(actions.hits.map(\.reasonText) == ["tls_unreadable"])
        #expect(actions.hits.first?.source == .transparent)
        #expect(actions.last == .close)
        var silent = redirected()
        #expect(silent.deadlinePassed(fixture.env(now: second + ProxyLimits.inspectTimeout)).hits.count == 1)

        let unfiltered = ProxyFixture(filtered: false)
        var open = redirected()
        #expect(open.receive("GET / HTTP/1.1\r\n", unfiltered.env()) == [.connect(destination)])
        #expect(open.connected(unfiltered.env()) == [.relay])
    }

    @Test func safeSearchGoesToTheRewriteTargetsAddress() throws {
        var connection = redirected()
        let actions = connection.receive(TLSClientHello.record(serverName: "www.google.com"), fixture.env())
        #expect(
            actions == [
                .lookup(
                    HostQuery(
                        name: try QueryName.parse("forcesafesearch.google.com"), profile: fixture.profile(),
                        inspect: false))
            ])
        #expect(connection.lookupFinished(.addresses([IPAddress("192.0.2.9")!]), fixture.env()).count == 1)
        #expect(connection.connected(fixture.env()) == [.relay])
    }

    @Test func anOpenRedirectedTunnelFollowsThePolicyOnItsName() {
        var connection = redirected()
        _ = connection.receive(TLSClientHello.record(serverName: "news.example"), fixture.env())
        _ = connection.connected(fixture.env())
        #expect(connection.tick(fixture.env(), lastActivity: second) == [])
        let stricter = ProxyFixture(policy: ProxyFixture.policy(blocked: ["news.example"]))
        let actions = connection.tick(stricter.env(), lastActivity: second)
        #expect(actions.last == .abort)
        #expect(actions.hits.map(\.reasonText) == ["blocked_domain:news.example"])
        #expect(actions.hits.first?.source == .transparent)
    }

    @Test func plainHTTPIsDecidedOnItsHostAndGoesToTheOriginalDestination() {
        var blocked = redirected(port: 80)
        let actions = blocked.receive("GET /r/all HTTP/1.1\r\nHost: www.reddit.com\r\n\r\n", fixture.env())
        #expect(actions.hits.map(\.reasonText) == ["blocked_domain:reddit.com"])
        #expect(actions.hits.first?.source == .transparent)
        #expect(blocked.takeClientOutput().hasPrefix("HTTP/1.1 403 Forbidden\r\n"))

        var allowed = redirected(port: 80)
        #expect(
            allowed.receive("GET /a?b HTTP/1.1\r\nHost: example.org\r\n\r\n", fixture.env()) == [
                .connect(Endpoint(destination.address, port: 80))
            ])
        #expect(allowed.connected(fixture.env()) == [])
        let sent = allowed.takeUpstreamOutput()
        #expect(sent.hasPrefix("GET /a?b HTTP/1.1\r\n"), "\(sent)")
        #expect(sent.contains("Host: example.org\r\n"))

        var hostless = redirected(port: 80)
        _ = hostless.receive("GET / HTTP/1.1\r\n\r\n", fixture.env())
        #expect(hostless.takeClientOutput().hasPrefix("HTTP/1.1 400 "))
    }
}
