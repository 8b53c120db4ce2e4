import Bytes
import DomainMatch
import Policy
import TestFixtures
import Testing

@testable import ProxyCore

/// Connections the firewall redirected to the transparent listener
/// (docs/network.md#transparent-mode), driven by hand: no CONNECT, no `200`, the server
/// name (or the `Host`) decided for the client's profile and looked up, the connection
/// made to the name's own address (or, under `verify`, to the dialled one only when the
/// name has it), hits with the source `transparent`.
@Suite struct TransparentTests {
    let fixture = ProxyFixture()
    let second: UInt64 = 1_000_000_000
    let destination = Endpoint(.v4(0xCB00_710A), port: 443)  // 203.0.113.10
    /// Where the names of these tests resolve to, elsewhere than the dialled address.
    let elsewhere = IPAddress("198.51.100.7")!

    var verifying: ProxyFixture {
        var verifying = fixture
        verifying.settings.transparentDestination = .verify
        return verifying
    }

    func lookup(_ name: String, inspect: Bool = true, preferIPv6: Bool = false) throws -> ProxyAction {
        .lookup(
            HostQuery(
                name: try QueryName.parse(name), profile: fixture.profile(), inspect: inspect, preferIPv6: preferIPv6))
    }

    func expectDenied(_ connection: ProxyConnection, _ comment: Comment? = nil) {
        #expect(
            connection.clientOut.getBytes(at: connection.clientOut.readerIndex, length: 7)
                == ProxyResponse.accessDeniedAlert, comment)
        #expect(connection.upstreamOut.readableBytes == 0, comment)
    }

    func redirected(_ fixture: ProxyFixture? = nil, port: UInt16 = 443) -> ProxyConnection {
        .redirected(
            client: ProxyFixture.client, arrivedOn: ProxyFixture.arrivedOn,
            destination: Endpoint(destination.address, port: port), now: second)
    }

    /// `connect`: the dialled address is the device's choice; the name's own address is
    /// where the connection goes, on the dialled port.
    @Test func anAllowedNameGoesToItsOwnAddressWithItsHelloFirst() throws {
        var connection = redirected()
        #expect(connection.deadline == second + ProxyLimits.inspectTimeout)
        let hello = TLSClientHello.record(serverName: "example.org")
        #expect(connection.receive(hello, fixture.env()) == [try lookup("example.org")], "no 200")
        #expect(
            connection.lookupFinished(.addresses([elsewhere]), fixture.env()) == [
                .connect(Endpoint(elsewhere, port: 443))
            ])
        #expect(connection.connected(fixture.env()) == [.relay])
        #expect(connection.clientOut.readableBytes == 0)
        #expect(connection.upstreamOut.readableBytes == hello.count)
        #expect(connection.tunnel?.serverName == (try? QueryName.parse("example.org")))
    }

    /// `verify`: the dialled address, and only when the name's answers include it; else
    /// `circumvention:destination` with an alert and not one byte sent on.
    @Test func verifyKeepsTheDialledAddressOnlyWhenTheNameHasIt() throws {
        let verifying = verifying
        var owned = redirected()
        _ = owned.receive(TLSClientHello.record(serverName: "example.org"), verifying.env())
        #expect(
            owned.lookupFinished(.addresses([elsewhere, destination.address]), verifying.env()) == [
                .connect(destination)
            ])

        var foreign = redirected()
        #expect(
            foreign.receive(TLSClientHello.record(serverName: "example.org"), verifying.env()) == [
                try lookup("example.org")
            ])
        let actions = foreign.lookupFinished(.addresses([elsewhere]), verifying.env())
        #expect(!actions.contains { if case .connect = $0 { true } else { false } })
        #expect(actions.hits.map(\.reasonText) == ["circumvention:destination"])
        #expect(actions.hits.first?.name == "example.org")
        #expect(actions.hits.first?.source == .transparent)
        expectDenied(foreign)

        // A dialled IPv6 address is looked for among the AAAA answers first.
        var six = ProxyConnection.redirected(
            client: ProxyFixture.client, arrivedOn: ProxyFixture.arrivedOn,
            destination: Endpoint(IPAddress("2001:db8:2::10")!, port: 443), now: second)
        #expect(
            six.receive(TLSClientHello.record(serverName: "example.org"), verifying.env()) == [
                try lookup("example.org", preferIPv6: true)
            ])
        #expect(
            six.lookupFinished(.addresses([IPAddress("2001:db8:2::10")!]), verifying.env()) == [
                .connect(Endpoint(IPAddress("2001:db8:2::10")!, port: 443))
            ])
    }

    /// A connection the firewall sent here whose destination is the gateway itself (its
    /// parent's page on 8443, say), or whose name resolves to it, is refused like a proxy
    /// request to it: never connected.
    @Test func theGatewayItselfIsNeverTheDestination() {
        var own = fixture
        own.settings.ownAddresses = [destination.address]
        for port: UInt16 in [443, 8443] {
            var connection = redirected(port: port)
            var actions = connection.receive(TLSClientHello.record(serverName: "gate.example"), own.env())
            actions += connection.lookupFinished(.addresses([destination.address]), own.env())
            #expect(!actions.contains { if case .connect = $0 { true } else { false } }, "port \(port)")
            expectDenied(connection, "port \(port)")
            #expect(actions.hits.isEmpty, "not a policy decision")
        }
        var verifying = own
        verifying.settings.transparentDestination = .verify
        var literal = redirected()
        verifying.settings.allowIPConnect = true
        let actions = literal.receive(TLSClientHello.record(serverName: "203.0.113.10"), verifying.env())
        #expect(!actions.contains { if case .connect = $0 { true } else { false } }, "an address as the name")
        expectDenied(literal)
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
        _ = connection.lookupFinished(.addresses([elsewhere]), fixture.env())
        #expect(connection.connected(fixture.env()) == [.relay])
        #expect(connection.tick(fixture.env(), lastActivity: second) == [])
        let stricter = ProxyFixture(policy: ProxyFixture.policy(blocked: ["news.example"]))
        let actions = connection.tick(stricter.env(), lastActivity: second)
        #expect(actions.last == .abort)
        #expect(actions.hits.map(\.reasonText) == ["blocked_domain:news.example"])
        #expect(actions.hits.first?.source == .transparent)
    }

    /// RFC 6066 forbids an address as a server name; a tool that sends one is decided on
    /// the address, as a hello without a name is, never as a name.
    @Test func aServerNameThatIsAnAddressIsAnIPLiteral() {
        for text in ["203.0.113.20", "2001:db8:2::20", "[2001:db8:2::20]"] {
            var connection = redirected()
            let actions = connection.receive(TLSClientHello.record(serverName: text), fixture.env())
            #expect(actions.hits.map(\.reasonText) == ["ip_literal"], "\(text)")
            #expect(actions.hits.first?.name == IPAddress(text.trimmingBrackets)?.description, "\(text)")
            expectDenied(connection, "\(text)")
        }
        var open = fixture
        open.settings.allowIPConnect = true
        var connection = redirected()
        #expect(
            connection.receive(TLSClientHello.record(serverName: "203.0.113.20"), open.env()) == [
                .connect(Endpoint(IPAddress("203.0.113.20")!, port: 443))
            ], "connect: the named address, not the dialled one")
        open.settings.transparentDestination = .verify
        var verified = redirected()
        let actions = verified.receive(TLSClientHello.record(serverName: "203.0.113.20"), open.env())
        #expect(actions.hits.map(\.reasonText) == ["circumvention:destination"])
        var same = redirected()
        #expect(same.receive(TLSClientHello.record(serverName: "203.0.113.10"), open.env()) == [.connect(destination)])
    }

    /// An encrypted hello under an ECH provider's public name hides which of its sites it is
    /// for: refused for a filtered profile. A GREASE ECH hello names its real site and is
    /// decided on it; the public name without ECH is an ordinary name.
    @Test func anEncryptedHelloUnderAPublicNameIsRefused() throws {
        var hidden = redirected()
        let actions = hidden.receive(
            TLSClientHello.record(serverName: "cloudflare-ech.com", ech: .outer), fixture.env())
        #expect(actions.hits.map(\.reasonText) == ["circumvention:ech"])
        #expect(actions.hits.first?.name == "cloudflare-ech.com")
        expectDenied(hidden)
        var defo = redirected()
        #expect(
            defo.receive(TLSClientHello.record(serverName: "cover.defo.ie", ech: .outer), fixture.env()).hits.map(
                \.reasonText) == ["circumvention:ech"])

        var grease = redirected()
        #expect(
            grease.receive(TLSClientHello.record(serverName: "example.org", ech: .outer), fixture.env()) == [
                try lookup("example.org")
            ])
        var plain = redirected()
        #expect(
            plain.receive(TLSClientHello.record(serverName: "cloudflare-ech.com"), fixture.env()) == [
                try lookup("cloudflare-ech.com")
            ])
        let unfiltered = ProxyFixture(filtered: false)
        var open = redirected()
        let passed = open.receive(
            TLSClientHello.record(serverName: "cloudflare-ech.com", ech: .outer), unfiltered.env())
        #expect(passed.hits.isEmpty)
        #expect(passed.contains { if case .lookup = $0 { true } else { false } })
    }

    /// Through a CONNECT tunnel the same hello is closed the same way.
    @Test func anEncryptedHelloUnderAPublicNameClosesACONNECTTunnel() {
        var connection = fixture.connection()
        _ = connection.receive("CONNECT shop.example:443 HTTP/1.1\r\nHost: shop.example:443\r\n\r\n", fixture.env())
        _ = connection.lookupFinished(.addresses([elsewhere]), fixture.env())
        _ = connection.connected(fixture.env())
        _ = connection.takeClientOutput()
        let actions = connection.receive(
            TLSClientHello.record(serverName: "cloudflare-ech.com", ech: .outer), fixture.env())
        #expect(actions.hits.map(\.reasonText) == ["circumvention:ech"])
        #expect(actions.last == .close)
        #expect(connection.upstreamOut.readableBytes == 0)
    }

    @Test func plainHTTPIsDecidedOnItsHostAndGoesToItsAddress() throws {
        var blocked = redirected(port: 80)
        let actions = blocked.receive("GET /r/all HTTP/1.1\r\nHost: www.reddit.com\r\n\r\n", fixture.env())
        #expect(actions.hits.map(\.reasonText) == ["blocked_domain:reddit.com"])
        #expect(actions.hits.first?.source == .transparent)
        #expect(blocked.takeClientOutput().hasPrefix("HTTP/1.1 403 Forbidden\r\n"))

        var allowed = redirected(port: 80)
        #expect(
            allowed.receive("GET /a?b HTTP/1.1\r\nHost: example.org\r\n\r\n", fixture.env()) == [
                try lookup("example.org")
            ])
        #expect(
            allowed.lookupFinished(.addresses([elsewhere]), fixture.env()) == [.connect(Endpoint(elsewhere, port: 80))])
        #expect(allowed.connected(fixture.env()) == [])
        let sent = allowed.takeUpstreamOutput()
        #expect(sent.hasPrefix("GET /a?b HTTP/1.1\r\n"), "\(sent)")
        #expect(sent.contains("Host: example.org\r\n"))

        var hostless = redirected(port: 80)
        _ = hostless.receive("GET / HTTP/1.1\r\n\r\n", fixture.env())
        #expect(hostless.takeClientOutput().hasPrefix("HTTP/1.1 400 "))
    }

    /// `verify` on port 80: each request of a keep-alive connection is checked on its own
    /// `Host`; the second names a site the dialled address does not belong to and gets the
    /// block page, not the origin.
    @Test func verifyChecksEveryRequestOfAKeepAliveConnection() throws {
        let verifying = verifying
        let dialled = destination.address
        var connection = redirected(port: 80)
        #expect(
            connection.receive("GET / HTTP/1.1\r\nHost: example.org\r\n\r\n", verifying.env()) == [
                try lookup("example.org")
            ])
        #expect(
            connection.lookupFinished(.addresses([dialled]), verifying.env()) == [.connect(Endpoint(dialled, port: 80))]
        )
        #expect(connection.connected(verifying.env()) == [])
        _ = connection.takeUpstreamOutput()
        _ = connection.receiveFromOrigin("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", verifying.env())
        #expect(connection.takeClientOutput().hasSuffix("ok"))
        #expect(connection.state == .readingHead)

        let second = connection.receive("GET / HTTP/1.1\r\nHost: news.example\r\n\r\n", verifying.env())
        #expect(second.contains(try lookup("news.example")), "another name: looked up again")
        let actions = connection.lookupFinished(.addresses([elsewhere]), verifying.env())
        #expect(actions.hits.map(\.reasonText) == ["circumvention:destination"])
        #expect(actions.hits.first?.name == "news.example")
        let page = connection.takeClientOutput()
        #expect(page.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), "\(page)")
        #expect(page.contains("does not belong to this site"), "\(page)")
        #expect(connection.takeUpstreamOutput().isEmpty)
    }
}

extension String {
    fileprivate var trimmingBrackets: Substring {
        hasPrefix("[") && hasSuffix("]") ? dropFirst().dropLast() : Substring(self)
    }
}
