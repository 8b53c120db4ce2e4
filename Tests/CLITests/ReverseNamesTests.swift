import DNSProxy
import DNSUpstream
import DNSWire
import DomainMatch
import EventLoop
import SystemIO
import TestSupport
import Testing

@testable import Gateway

/// Device names by reverse DNS (docs/parent-page.md#pages), asked of real dnsmasq servers:
/// the question's name for both families, the server `local_forward` names for the reverse
/// zone before the upstream, a name shown once found and never waited for, none for an
/// address with no name or a dead server, and no server at all when every upstream is
/// DNS-over-TLS or a public resolver.
@Suite(.blocking) struct ReverseNamesTests {
    static func names(_ upstreams: [String], forwards: [String] = []) throws -> ReverseNames? {
        try ReverseNames(
            upstreams: upstreams.map { UpstreamSpec($0)! }, localForwards: forwards.map { LocalForward($0)! },
            clock: SystemClock(), log: Logger())
    }

    @Test func theQuestionIsTheAddressReversed() {
        #expect(ReverseNames.reverseName(of: IPAddress("192.168.1.20")!) == "20.1.168.192.in-addr.arpa.")
        #expect(
            ReverseNames.reverseName(of: IPAddress("2001:db8::1")!)
                == "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.")
    }

    @Test func aNameIsAskedOnceAndShownFromTheNextLook() throws {
        let upstream = try DnsmasqUpstream([
            "--ptr-record=20.1.168.192.in-addr.arpa,kids-ipad.lan", "--ptr-record=5.0.0.127.in-addr.arpa,den.lan",
        ])
        let router = try DnsmasqUpstream(["--ptr-record=30.1.168.192.in-addr.arpa,router-named.lan"])
        let names = try #require(
            try Self.names([upstream.spec], forwards: ["168.192.in-addr.arpa=\(router.spec)"]))
        defer { names.stop() }
        // Never waited for: the first look has nothing yet.
        #expect(names.name(for: IPAddress("127.0.0.5")!) == nil)
        #expect(waitUntil(timeout: .seconds(5)) { names.name(for: IPAddress("127.0.0.5")!) == "den.lan" })
        // 192.168.x.x goes to the server of its reverse zone, not to the upstream.
        #expect(names.lookUp(IPAddress("192.168.1.30")!) == "router-named.lan")
        #expect(names.lookUp(IPAddress("192.168.1.20")!) == nil, "the upstream is not asked for the zone")
        #expect(names.lookUp(IPAddress("127.0.0.6")!) == nil, "no name")
    }

    @Test func aDeadServerGivesNoNameInTime() throws {
        let names = try #require(try Self.names(["127.0.0.1:9"]))
        defer { names.stop() }
        let start = ContinuousClock.now
        #expect(names.lookUp(IPAddress("127.0.0.5")!) == nil)
        #expect(ContinuousClock.now - start < .seconds(3), "at most its timeout")
    }

    /// A public resolver knows no LAN names and is not told the LAN's addresses.
    @Test func onlyAResolverOnTheLANOrThisHostIsAsked() throws {
        #expect(try Self.names(["9.9.9.9"]) == nil)
        #expect(try Self.names(["[2620:fe::fe]:53"]) == nil)
        for local in ["192.168.1.1", "10.0.0.1", "172.20.0.1", "127.0.0.53", "[fd00::1]:53", "[fe80::1]:53"] {
            #expect(try Self.names([local]) != nil, "\(local)")
        }
        // With a public upstream, the router named for its reverse zone is still asked.
        #expect(try Self.names(["9.9.9.9"], forwards: ["168.192.in-addr.arpa=192.168.1.1"])?.servers.count == 1)
    }

    @Test func noServerWhenEveryUpstreamIsDNSOverTLS() throws {
        #expect(try Self.names(["tls://127.0.0.1:853#dns.example"]) == nil)
        #expect(try Self.names(["tls://127.0.0.1:853#dns.example"], forwards: ["lan=127.0.0.1:53"]) == nil)
    }
}
