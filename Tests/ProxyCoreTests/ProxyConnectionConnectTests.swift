import Bytes
import DomainMatch
import Policy
import TestFixtures
import Testing

@testable import ProxyCore

/// The state machine's CONNECT path (docs/proxy.md#connect), driven by hand with manual time.
@Suite struct ProxyConnectionConnectTests {
    let fixture = ProxyFixture()
    let second: UInt64 = 1_000_000_000
    let origin = Endpoint(.v4(0xC000_0207), port: 443)

    /// A connection whose CONNECT to `host` has been answered `200`.
    private func established(_ host: String = "example.org", _ fixture: ProxyFixture? = nil) -> ProxyConnection {
        let fixture = fixture ?? self.fixture
        var connection = fixture.connection()
        #expect(
            connection.receive("CONNECT \(host):443 HTTP/1.1\r\nHost: \(host):443\r\n\r\n", fixture.env())
                .contains { if case .lookup = $0 { return true } else { return false } })
        #expect(connection.lookupFinished(.addresses([IPAddress("192.0.2.7")!]), fixture.env()) == [.connect(origin)])
        #expect(connection.connected(fixture.env()) == [])
        #expect(connection.takeClientOutput() == "HTTP/1.1 200 Connection established\r\n\r\n")
        return connection
    }

    @Test func anAllowedConnectResolvesConnectsAndRelays() throws {
        var connection = fixture.connection()
        let actions = connection.receive(
            "CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n", fixture.env())
        #expect(
            actions == [
                .lookup(HostQuery(name: try QueryName.parse("example.org"), profile: fixture.profile(), inspect: true))
            ]
        )
        #expect(connection.deadline == second + fixture.settings.connectTimeout)
        #expect(!connection.wantsClientBytes)
        #expect(connection.lookupFinished(.addresses([IPAddress("192.0.2.7")!]), fixture.env()) == [.connect(origin)])
        #expect(connection.connected(fixture.env()) == [])
        #expect(connection.takeClientOutput() == "HTTP/1.1 200 Connection established\r\n\r\n")
        #expect(connection.deadline == second + ProxyLimits.inspectTimeout)
        let hello = TLSClientHello.record(serverName: "example.org")
        #expect(connection.receive(hello, fixture.env()) == [.relay])
        #expect(connection.upstreamOut.readableBytes == hello.count, "the ClientHello goes to the origin first")
        #expect(connection.tunnel?.serverName == (try QueryName.parse("example.org")))
        #expect(connection.deadline == nil)
    }

    @Test func aBlockedConnectIsA403AndAHitAndNeverALookup() {
        var connection = fixture.connection()
        let actions = connection.receive("CONNECT www.reddit.com:443 HTTP/1.1\r\n\r\n", fixture.env())
        #expect(actions.count == 1)
        let hit = actions.hits.first
        #expect(hit?.name == "www.reddit.com")
        #expect(hit?.reasonText == "blocked_domain:reddit.com")
        #expect(hit?.source == .proxy)
        #expect(hit?.client == ProxyFixture.client)
        let response = connection.takeClientOutput()
        #expect(response.hasPrefix("HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"))
        #expect(response.contains("\r\nX-Phosra-Block: blocked_domain:reddit.com\r\n"))
        #expect(response.hasSuffix("\r\n\r\nblocked by phosra-gate: www.reddit.com (blocked_domain:reddit.com)\n"))
        #expect(connection.state == .closing)
        #expect(connection.deadlinePassed(fixture.env(now: second + ProxyLimits.lingerTimeout)) == [.close])
    }

    @Test func portsAndIPLiteralsAreRefusedWithTheirReasons() {
        var port = fixture.connection()
        #expect(port.receive("CONNECT example.org:25 HTTP/1.1\r\n\r\n", fixture.env()).hits.first?.reasonText == "port")
        #expect(port.takeClientOutput().contains("X-Phosra-Block: port\r\n"))
        var literal = fixture.connection()
        #expect(
            literal.receive("CONNECT 192.0.2.7:443 HTTP/1.1\r\n\r\n", fixture.env()).hits.first?.reasonText
                == "ip_literal")
        #expect(literal.takeClientOutput().contains("X-Phosra-Block: ip_literal\r\n"))
        var allowed = fixture
        allowed.settings.allowIPConnect = true
        var direct = allowed.connection()
        #expect(direct.receive("CONNECT 192.0.2.7:443 HTTP/1.1\r\n\r\n", allowed.env()) == [.connect(origin)])
    }

    @Test func safeSearchConnectsToTheRewriteTarget() throws {
        let before = fixture.snapshot.engine.profiles.profiles[0].activity.drain()
        var connection = fixture.connection()
        let actions = connection.receive("CONNECT www.google.com:443 HTTP/1.1\r\n\r\n", fixture.env())
        #expect(
            actions == [
                .lookup(
                    HostQuery(
                        name: try QueryName.parse("forcesafesearch.google.com"), profile: fixture.profile(),
                        inspect: true))
            ])
        let counts = fixture.snapshot.engine.profiles.profiles[0].activity.drain()
        #expect(counts.queries == 1 && counts.rewritesByEngine == ["google": 1], "\(before)")
        _ = connection.lookupFinished(.addresses([IPAddress("192.0.2.7")!]), fixture.env())
        _ = connection.connected(fixture.env())
        // The browser still says www.google.com in its SNI: the tunnel goes where that is rewritten.
        #expect(connection.receive(TLSClientHello.record(serverName: "www.google.com"), fixture.env()) == [.relay])
    }

    @Test func anSNINamingABlockedHostClosesTheTunnelWithAHit() {
        var connection = established()
        let actions = connection.receive(TLSClientHello.record(serverName: "www.reddit.com"), fixture.env())
        #expect(actions.last == .close)
        #expect(actions.hits.first?.name == "www.reddit.com")
        #expect(actions.hits.first?.reasonText == "sni:www.reddit.com")
        #expect(connection.upstreamOut.readableBytes == 0, "not one byte reached the origin")
        // A rewrite to somewhere the tunnel is not going closes it too.
        var elsewhere = established()
        #expect(
            elsewhere.receive(TLSClientHello.record(serverName: "www.google.com"), fixture.env()).hits.first?.reasonText
                == "sni:www.google.com")
    }

    @Test func aSplitClientHelloIsReassembledBeforeDeciding() {
        let records = TLSClientHello.records(TLSClientHello.handshake(serverName: "x.adult.example"), fragmentSize: 40)
        var connection = established()
        #expect(connection.receive(Array(records[..<30]), fixture.env()) == [])
        #expect(connection.receive(Array(records[30..<70]), fixture.env()) == [])
        let actions = connection.receive(Array(records[70...]), fixture.env())
        #expect(actions.hits.first?.reasonText == "sni:x.adult.example")
        #expect(actions.hits.first?.category == .adult)
    }

    @Test func aHelloWithoutSNIIsRelayed() {
        var anonymous = established()
        #expect(anonymous.receive(TLSClientHello.record(serverName: nil), fixture.env()) == [.relay])
    }

    /// What a curious child tries: anything on port 443 whose name cannot be read is closed
    /// for a filtered profile, with a `tls_unreadable` hit on the CONNECT host, and not one
    /// byte reaches the origin.
    @Test func unreadableFirstBytesCloseAFilteredTunnelOn443() {
        func expectClosed(_ actions: [ProxyAction], _ connection: ProxyConnection, _ what: Comment) {
            #expect(actions.last == .close, what)
            #expect(actions.hits.map(\.reasonText) == ["tls_unreadable"], what)
            #expect(actions.hits.first?.name == "example.org", what)
            #expect(connection.upstreamOut.readableBytes == 0, what)
        }
        var plain = established()
        expectClosed(plain.receive("GET / HTTP/1.1\r\n", fixture.env()), plain, "not TLS")
        var silent = established()
        #expect(silent.deadlinePassed(fixture.env(now: second + ProxyLimits.inspectTimeout - 1)) == [])
        expectClosed(silent.deadlinePassed(fixture.env(now: second + ProxyLimits.inspectTimeout)), silent, "2 s")
        // A record header at once, the rest after the 2 s.
        var slow = established()
        let hello = TLSClientHello.record(serverName: "www.reddit.com")
        #expect(slow.receive(Array(hello.prefix(5)), fixture.env()) == [])
        expectClosed(
            slow.deadlinePassed(fixture.env(now: second + ProxyLimits.inspectTimeout)), slow, "a header, then a pause")
        var huge = established()
        expectClosed(
            huge.receive(
                Array(TLSClientHello.record(serverName: "www.reddit.com", padding: 20_000).prefix(16_384)),
                fixture.env()), huge, "16 KiB without a whole hello")
        // A whole hello past 16 KiB (two records) arriving in one read is the same: only
        // the first 16 KiB are read, whatever the reads.
        var padded = established()
        expectClosed(
            padded.receive(
                TLSClientHello.records(
                    TLSClientHello.handshake(serverName: "www.reddit.com", padding: 17_000), fragmentSize: 16_384),
                fixture.env()), padded, "a hello padded past 16 KiB, in one read")
        var dots = established()
        expectClosed(
            dots.receive(TLSClientHello.record(serverName: "www.reddit.com.."), fixture.env()), dots,
            "a name that is not a valid name")
        var malformed = established()
        var broken = TLSClientHello.record(serverName: "www.reddit.com")
        broken[5] = 2  // a ServerHello where a ClientHello must be
        expectClosed(malformed.receive(broken, fixture.env()), malformed, "malformed")
    }

    /// An unfiltered profile, or a port the parent opened knowingly, relays what it cannot
    /// read; a server name there is still decided.
    @Test func unreadableBytesAreRelayedForUnfilteredProfilesAndOtherPorts() {
        let unfiltered = ProxyFixture(filtered: false)
        var open = established("example.org", unfiltered)
        #expect(open.receive("GET / HTTP/1.1\r\n", unfiltered.env()) == [.relay])

        var ports = fixture
        ports.settings.connectPorts = [443, 8443]
        var other = ports.connection()
        _ = other.receive("CONNECT example.org:8443 HTTP/1.1\r\n\r\n", ports.env())
        _ = other.lookupFinished(.addresses([IPAddress("192.0.2.7")!]), ports.env())
        _ = other.connected(ports.env())
        #expect(other.receive("SSH-2.0-OpenSSH_9.2\r\n", ports.env()) == [.relay])
        var named = ports.connection()
        _ = named.receive("CONNECT example.org:8443 HTTP/1.1\r\n\r\n", ports.env())
        _ = named.lookupFinished(.addresses([IPAddress("192.0.2.7")!]), ports.env())
        _ = named.connected(ports.env())
        #expect(
            named.receive(TLSClientHello.record(serverName: "www.reddit.com"), ports.env()).hits.first?.reasonText
                == "sni:www.reddit.com")
    }

    @Test func connectFailuresTryTheNextAddressThen502AndTimeoutsAre504() {
        var connection = fixture.connection()
        _ = connection.receive("CONNECT example.org:443 HTTP/1.1\r\n\r\n", fixture.env())
        let second = Endpoint(.v4(0xC000_0208), port: 443)
        _ = connection.lookupFinished(.addresses([IPAddress("192.0.2.7")!, IPAddress("192.0.2.8")!]), fixture.env())
        #expect(connection.connectFailed(fixture.env()) == [.connect(second)])
        #expect(connection.connectFailed(fixture.env()).contains(.dropUpstream))
        #expect(connection.takeClientOutput().hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"))

        var slow = fixture.connection()
        _ = slow.receive("CONNECT example.org:443 HTTP/1.1\r\n\r\n", fixture.env())
        _ = slow.deadlinePassed(fixture.env(now: self.second + fixture.settings.connectTimeout))
        #expect(slow.takeClientOutput().hasPrefix("HTTP/1.1 504 Gateway Timeout\r\n"))

        var unknown = fixture.connection()
        _ = unknown.receive("CONNECT nowhere.example:443 HTTP/1.1\r\n\r\n", fixture.env())
        _ = unknown.lookupFinished(.notFound, fixture.env())
        #expect(unknown.takeClientOutput().hasPrefix("HTTP/1.1 502 Bad Gateway\r\n"))
    }

    @Test func aBlockFoundByTheResolverIsA403WithoutASecondHit() {
        var connection = fixture.connection()
        _ = connection.receive("CONNECT cdn.example:443 HTTP/1.1\r\n\r\n", fixture.env())
        let actions = connection.lookupFinished(.blocked(BlockReason(text: "category:adult").decision), fixture.env())
        #expect(actions.hits.isEmpty, "the resolver recorded it")
        #expect(connection.takeClientOutput().contains("X-Phosra-Block: category:adult\r\n"))
    }

    /// A chain reaching a safe-search name: the connection looks up the target in turn,
    /// uninspected, and connects there; no second decision, no hit.
    @Test func aChainReachingASafeSearchNameLooksUpItsTarget() throws {
        var connection = fixture.connection()
        _ = connection.receive("CONNECT video.example:443 HTTP/1.1\r\n\r\n", fixture.env())
        let target = try QueryName.parse("restrict.youtube.com")
        let next = connection.lookupFinished(.rewrite(target), fixture.env())
        #expect(next == [.lookup(HostQuery(name: target, profile: fixture.profile(), inspect: false))])
        let origin = Endpoint(IPAddress("192.0.2.8")!, port: 443)
        #expect(connection.lookupFinished(.addresses([IPAddress("192.0.2.8")!]), fixture.env()) == [.connect(origin)])
    }

    @Test func openTunnelsCloseWhenACutoffBeginsOrAPolicyBlocksThem() {
        // Downtime from 12:01: at 12:00 the tunnel opens, at 12:01 it is closed.
        let timed = ProxyFixture(policy: ProxyFixture.policy(downtime: ("12:01", "13:00")))
        var connection = established("example.org", timed)
        _ = connection.receive(TLSClientHello.record(serverName: "example.org"), timed.env())
        #expect(connection.tick(timed.env(), lastActivity: second) == [])
        let actions = connection.tick(timed.env(wallClock: ProxyFixture.noon + 60), lastActivity: second)
        #expect(actions.last == .abort, "a policy end drops what is buffered")
        #expect(actions.hits.first?.reasonText == "downtime")
        #expect(actions.hits.first?.name == "example.org")

        var open = established("example.org")
        _ = open.receive(TLSClientHello.record(serverName: "example.org"), fixture.env())
        let stricter = ProxyFixture(policy: ProxyFixture.policy(blocked: ["example.org"]))
        let closed = open.tick(stricter.env(), lastActivity: second)
        #expect(closed.hits.first?.reasonText == "blocked_domain:example.org")

        // A tunnel to an allowed host whose hello named another: the name the hello asked
        // for is re-decided too.
        var fronted = established("example.org")
        #expect(fronted.receive(TLSClientHello.record(serverName: "news.example"), fixture.env()) == [.relay])
        let newsBlocked = ProxyFixture(policy: ProxyFixture.policy(blocked: ["news.example"]))
        let byName = fronted.tick(newsBlocked.env(), lastActivity: second)
        #expect(byName.last == .abort)
        #expect(byName.hits.map(\.reasonText) == ["sni:news.example"])
    }

    @Test func anIdleTunnelIsClosed() {
        var settings = fixture
        settings.settings.tunnelIdle = 5 * second
        var connection = established("example.org", settings)
        #expect(connection.receive(TLSClientHello.record(serverName: "example.org"), settings.env()) == [.relay])
        #expect(connection.tick(settings.env(now: 5 * second), lastActivity: second) == [])
        #expect(connection.tick(settings.env(now: 6 * second), lastActivity: second) == [.close])
    }

    /// docs/proxy.md#stalled-devices: bytes that have waited for the device since an instant,
    /// without it taking any, end the tunnel with a reset once `stall_timeout` has passed;
    /// a tunnel whose device keeps up (no instant) stays.
    @Test func aTunnelWhoseDeviceTakesNothingForTheStallTimeoutIsReset() {
        var settings = fixture
        settings.settings.stallTimeout = 3 * second
        var connection = established("example.org", settings)
        #expect(connection.receive(TLSClientHello.record(serverName: "example.org"), settings.env()) == [.relay])
        let now = 10 * second
        #expect(connection.tick(settings.env(now: now), lastActivity: now, deviceStalledSince: 8 * second) == [])
        #expect(connection.tick(settings.env(now: now), lastActivity: now, deviceStalledSince: nil) == [])
        #expect(connection.tick(settings.env(now: now), lastActivity: now, deviceStalledSince: 7 * second) == [.abort])

        // Stalled and now blocked too: the block is judged first, so its hit is recorded.
        var blocked = ProxyFixture(policy: ProxyFixture.policy(blocked: ["example.org"]))
        blocked.settings.stallTimeout = 3 * second
        var both = established("example.org", settings)
        _ = both.receive(TLSClientHello.record(serverName: "example.org"), settings.env())
        let actions = both.tick(blocked.env(now: now), lastActivity: now, deviceStalledSince: 7 * second)
        #expect(actions.last == .abort)
        #expect(actions.hits.map(\.reasonText) == ["blocked_domain:example.org"])
    }

    /// The lookup carries what the connection decided: the profile, and whether to inspect
    /// (not for a parent-allowed host), so the resolver never decides the host again.
    @Test func theLookupCarriesTheProfileAndTheDecisionsInspection() throws {
        let allowing = ProxyFixture(policy: ProxyFixture.policy(allowed: ["example.org"]))
        var connection = allowing.connection()
        let actions = connection.receive("CONNECT www.example.org:443 HTTP/1.1\r\n\r\n", allowing.env())
        #expect(
            actions == [
                .lookup(
                    HostQuery(name: try QueryName.parse("www.example.org"), profile: allowing.profile(), inspect: false)
                )
            ])
        var blocked = fixture.connection()
        let refused = blocked.receive("CONNECT www.reddit.com:443 HTTP/1.1\r\n\r\n", fixture.env())
        #expect(!refused.contains { if case .lookup = $0 { return true } else { return false } })
    }
}
