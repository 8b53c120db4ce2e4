import DNSUpstream
import DNSWire
import DomainMatch
import Policy
import TestSupport
import Testing

@testable import DNSProxy

@Suite(.blocking) struct QueryPipelineTests {
    typealias F = PipelineFixture

    @Test func hostileInputIsRejectedInLayers() {
        let fixture = F()
        #expect(fixture.receive([1, 2, 3]).isDrop, "no header")
        var response = F.query("example.org")
        response[2] |= 0x80
        #expect(fixture.receive(response).isDrop, "responses are dropped")
        var notify = F.query("example.org")
        notify[2] |= 4 << 3
        #expect(fixture.receive(notify).replyMessage?.rcode == .notImp)
        var garbage = F.query("example.org")
        garbage.removeLast(5)
        #expect(fixture.receive(garbage).replyMessage?.rcode == .formErr)
        var twoQuestions = F.query("example.org", edns: false)
        twoQuestions[5] = 2
        #expect(fixture.receive(twoQuestions).replyMessage?.rcode == .formErr)
        #expect(fixture.receive(F.query("example.org", .axfr)).replyMessage?.rcode == .refused)
    }

    @Test func clientsOutsideTheAccessListAreRefused() {
        let fixture = F()
        let reply = fixture.receive(F.query("example.org"), from: IPAddress("203.0.113.9")!).replyMessage
        #expect(reply?.rcode == .refused)
        #expect(reply?.answers.isEmpty == true)
        #expect(fixture.receive(F.query("example.org"), from: IPAddress("::1")!).pending != nil)
        #expect(fixture.receive(F.query("example.org"), from: IPAddress("::ffff:10.1.2.3")!).pending != nil)
    }

    /// `status` names a device only when the query proves its source (docs/sync.md#hits):
    /// over UDP its MAC in the neighbour table or loopback, over TCP the handshake. A UDP
    /// source with neither still counts as a query.
    @Test func onlyAProvenSourceIsNamedAsADevice() throws {
        let fixture = F()
        let phone = try #require(MACAddress("02:00:5e:10:00:0a"))
        let query = F.query("example.org")
        let spoofed = IPAddress("192.168.1.77")!
        let unproven = fixture.pipeline.receive(query, from: spoofed, overUDP: true, now: F.noon)
        #expect(unproven.pending != nil, "answered all the same")
        _ = fixture.pipeline.receive(query, from: F.client, mac: phone, overUDP: true, now: F.noon)
        _ = fixture.pipeline.receive(query, from: IPAddress("127.0.0.2")!, overUDP: true, now: F.noon)
        _ = fixture.pipeline.receive(query, from: IPAddress("::1")!, overUDP: true, now: F.noon)
        _ = fixture.pipeline.receive(query, from: IPAddress("192.168.1.30")!, overUDP: false, now: F.noon)
        let counts = fixture.pipeline.snapshot.engine.profiles.choose(Client(address: spoofed, mac: nil))
            .activity.drain()
        #expect(counts.queries == 5)
        #expect(
            Set(counts.clients.keys) == [
                SeenClient(address: F.client, mac: phone), SeenClient(address: IPAddress("127.0.0.2")!, mac: nil),
                SeenClient(address: IPAddress("::1")!, mac: nil),
                SeenClient(address: IPAddress("192.168.1.30")!, mac: nil),
            ])
    }

    @Test func theRateLimitRefusesBeyondTheBurst() {
        let fixture = F(rate: 5)
        let results = (0..<12).map { _ in fixture.receive(F.query("example.org")).replyMessage?.rcode }
        #expect(results.prefix(10).allSatisfy { $0 == nil }, "a burst of twice the rate")
        #expect(results.suffix(2).allSatisfy { $0 == .refused })
        let later = Now(monotonicMilliseconds: F.noon.monotonicMilliseconds + 1000, unixSeconds: F.noon.unixSeconds + 1)
        #expect(fixture.receive(F.query("example.org"), now: later).pending != nil, "refilled")
    }

    /// The budget belongs to the run, not to the snapshot: a new policy, list set or
    /// reload (each a new snapshot) gives no client a fresh burst.
    @Test func theRateLimitHoldsAcrossASnapshotSwap() {
        let fixture = F(rate: 5)
        for _ in 0..<10 { _ = fixture.receive(F.query("example.org")) }
        #expect(fixture.receive(F.query("example.org")).replyMessage?.rcode == .refused)
        let other = F(policy: F.strict, rate: 5)
        fixture.pipeline.replace(other.pipeline.snapshot)
        #expect(fixture.pipeline.snapshot === other.pipeline.snapshot)
        #expect(fixture.receive(F.query("example.org")).replyMessage?.rcode == .refused, "still spent")
        // A reload with a new rate keeps the client's bucket: still empty until it refills.
        fixture.pipeline.rateLimiter.update(rate: 50)
        #expect(fixture.receive(F.query("example.org")).replyMessage?.rcode == .refused, "still spent")
        let later = Now(monotonicMilliseconds: F.noon.monotonicMilliseconds + 100, unixSeconds: F.noon.unixSeconds)
        #expect(fixture.receive(F.query("example.org"), now: later).pending != nil, "refilled at the new rate")
    }

    @Test func localAnswersNeverReachTheUpstream() {
        let fixture = F(localForward: ["corp.lan"])
        #expect(fixture.receive(F.query("use-application-dns.net")).replyMessage?.rcode == .nxDomain)
        let discovery = fixture.receive(F.query("_dns.resolver.arpa", DNSType(64))).replyMessage
        #expect(discovery?.rcode == .noError && discovery?.answers.isEmpty == true)
        #expect(fixture.receive(F.query("_esni.example.com", .txt)).replyMessage?.rcode == .nxDomain)
        #expect(fixture.receive(F.query("4.3.2.10.in-addr.arpa", .ptr)).replyMessage?.rcode == .nxDomain)
        #expect(fixture.receive(F.query("20.1.168.192.in-addr.arpa", .ptr)).replyMessage?.rcode == .nxDomain)
        #expect(fixture.receive(F.query("printer.home.arpa")).replyMessage?.rcode == .nxDomain)
        #expect(fixture.receive(F.query("nas.local")).replyMessage?.rcode == .nxDomain)
        #expect(fixture.receive(F.query("nas.lan")).replyMessage?.rcode == .nxDomain)
        #expect(fixture.receive(F.query("host.corp.lan")).pending?.localZone?.description == "corp.lan")
        #expect(
            fixture.receive(F.query("8.8.8.8.in-addr.arpa", .ptr)).pending != nil, "public reverse zones are forwarded")
        #expect(fixture.hits.all.isEmpty)
    }

    @Test(arguments: [
        (BlockMode.nxdomain, DNSType.a, DNSRcode.nxDomain, ""),
        (.nxdomain, .aaaa, .nxDomain, ""),
        (.null, .a, .noError, "0.0.0.0"),
        (.null, .aaaa, .noError, "::"),
        (.null, .mx, .noError, ""),
        (.refused, .a, .refused, ""),
        (BlockMode("ip:192.0.2.7,2001:db8::7")!, .a, .noError, "192.0.2.7"),
        (BlockMode("ip:192.0.2.7,2001:db8::7")!, .aaaa, .noError, "2001:db8::7"),
        (BlockMode("ip:192.0.2.7")!, .aaaa, .noError, ""),
        (BlockMode("ip:192.0.2.7")!, .txt, .noError, ""),
    ])
    func blockModes(mode: BlockMode, type: DNSType, rcode: DNSRcode, address: String) throws {
        let fixture = F(policy: Self.policyBlocking(["blocked.example"]), mode: mode, blockTTL: 42)
        let reply = try #require(fixture.receive(F.query("www.blocked.example", type)).replyMessage)
        #expect(reply.rcode == rcode)
        #expect(reply.extendedErrorTexts == ["blocked_domain:blocked.example"])
        if address.isEmpty {
            #expect(reply.answers.isEmpty)
            if rcode != .refused {
                let soa = try #require(reply.authorities.first)
                #expect(soa.ttl == 42 && soa.rdata.soa?.minimum == 42)
            }
        } else {
            #expect(reply.answers.map { "\($0.rdata)" } == [address])
            #expect(reply.answers.first?.ttl == 42)
        }
        #expect(fixture.hits.all.map(\.reasonText) == ["blocked_domain:blocked.example"])
        #expect(fixture.hits.all.first?.name == "www.blocked.example")
    }

    @Test func eachReasonCarriesItsText() throws {
        var policy = Self.policyBlocking(["parent.example"])
        policy.webFilter.level = "strict"
        let fixture = F(policy: policy)
        for (name, text) in [
            ("parent.example", "blocked_domain:parent.example"), ("x.adult.example", "category:adult"),
            ("dns.google", "circumvention:dns.google"), ("vpn.example", "circumvention:vpn.example"),
        ] {
            let reply = try #require(fixture.receive(F.query(name)).replyMessage)
            #expect(reply.extendedErrorTexts == [text], "\(name)")
        }
        let noEDNS = try #require(fixture.receive(F.query("parent.example", edns: false)).replyMessage)
        #expect(noEDNS.rcode == .nxDomain && noEDNS.edns == nil, "no OPT for a client that sent none")
    }

    @Test func blockTTLIsCappedAtTheNextCutoff() throws {
        var policy = Self.policyBlocking(["blocked.example"])
        policy.screenTime.downtimeWindows = [.init(startTime: "12:00", endTime: "12:01")]
        let fixture = F(policy: policy, blockTTL: 600)
        let reply = try #require(fixture.receive(F.query("example.org")).replyMessage)
        #expect(reply.extendedErrorTexts == ["downtime"])
        #expect(reply.authorities.first?.ttl == 60, "downtime ends at 12:01")
    }

    static func policyBlocking(_ names: [String]) -> CompiledPolicy {
        var policy = CompiledPolicy()
        policy.version = 1
        policy.webFilter.blockedDomains = names
        return policy
    }
}

extension QueryPipelineTests {
    @Test func anEDNSVersionAboveZeroGetsBADVERS() throws {
        var packet = F.query("example.org")
        // The OPT record closes the packet: ext-rcode, version, flags (2), rdlength (2).
        packet[packet.count - 5] = 1
        let reply = try #require(F().receive(packet).replyMessage)
        #expect(reply.rcode == .badVers)
        #expect(reply.edns?.version == 0)
    }
}

extension QueryPipelineTests {
    /// `blocked.phosra-gate.test`, which `phosra-gate doctor` asks (docs/dns.md#local-answers):
    /// blocked as `block_mode` says with the reason `canary` for a filtered profile, never
    /// a hit and never forwarded; NXDOMAIN without a reason for an unfiltered profile.
    @Test(arguments: [
        (BlockMode.nxdomain, DNSType.a, DNSRcode.nxDomain, ""),
        (.null, .a, .noError, "0.0.0.0"),
        (.refused, .aaaa, .refused, ""),
    ])
    func theCanaryIsBlockedForAFilteredProfile(
        mode: BlockMode, type: DNSType, rcode: DNSRcode, address: String
    )
        throws
    {
        let fixture = F(policy: Self.policyBlocking(["blocked.example"]), mode: mode)
        let reply = try #require(fixture.receive(F.query("blocked.phosra-gate.test", type)).replyMessage)
        #expect(reply.rcode == rcode)
        #expect(reply.extendedErrorTexts == ["canary"])
        #expect(reply.answers.map { "\($0.rdata)" } == (address.isEmpty ? [] : [address]))
        let upper = try #require(fixture.receive(F.query("Blocked.Phosra-Gate.TEST", type)).replyMessage)
        #expect(upper.extendedErrorTexts == ["canary"])
        #expect(fixture.hits.all.isEmpty, "the canary is no hit")
        #expect(fixture.receive(F.query("www.blocked.phosra-gate.test")).pending != nil, "only the name itself")
    }

    @Test func theCanaryIsNXDOMAINForAnUnfilteredProfile() throws {
        let fixture = F(unfiltered: true)
        let reply = try #require(fixture.receive(F.query("blocked.phosra-gate.test")).replyMessage)
        #expect(reply.rcode == .nxDomain)
        #expect(reply.extendedErrorTexts.isEmpty)
        #expect(fixture.hits.all.isEmpty)
    }
}
