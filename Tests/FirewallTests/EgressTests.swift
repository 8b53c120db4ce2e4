import DomainMatch
import Foundation
import Policy
import TestSupport
import Testing

@testable import Firewall

/// Egress for filtered devices (docs/network.md#egress): the `egress_allow` syntax, the
/// rules that keep `egress = web` devices to the web, and how refused attempts read back
/// from the table become few hits.
@Suite(.blocking) struct EgressTests {
    typealias Rules = FirewallRulesetTests

    @Test func egressAllowEntriesParse() throws {
        #expect(try EgressRule.parse("tcp/993") == EgressRule(.tcp, 993...993))
        #expect(try EgressRule.parse("UDP/3478-3481") == EgressRule(.udp, 3478...3481))
        #expect(
            try EgressRule.parse("tcp/22@203.0.113.0/24")
                == EgressRule(.tcp, 22...22, to: AddressRange("203.0.113.0/24")))
        #expect(try EgressRule.parse("udp/51820@2001:db8::7").destination == AddressRange("2001:db8::7/128"))
        // Host bits past the prefix are cleared: nftables takes the network.
        #expect(try EgressRule.parse("tcp/22@203.0.113.9/24").description == "tcp/22@203.0.113.0/24")
        for text in ["tcp/993", "udp/3478-3481", "tcp/22@203.0.113.0/24", "udp/1-65535"] {
            #expect(try EgressRule.parse(text).description == text)
        }
    }

    @Test func aBadEntrySaysWhichPartIsWrong() {
        let cases: [(String, EgressRule.ParseError)] = [
            ("993", .noProtocol("993")),
            ("icmp/8", .unknownProtocol("icmp")),
            ("tcp/", .badPort("")),
            ("tcp/0", .badPort("0")),
            ("tcp/65536", .badPort("65536")),
            ("tcp/+80", .badPort("+80")),
            ("tcp/80-", .badPort("")),
            ("udp/3481-3478", .reversedRange("3481-3478")),
            ("tcp/22@example.org", .badDestination("example.org")),
            ("tcp/22@10.0.0.0/33", .badDestination("10.0.0.0/33")),
        ]
        for (text, error) in cases {
            #expect(throws: error, "\(text)") { try EgressRule.parse(text) }
        }
        #expect(EgressRule.ParseError.unknownProtocol("icmp").description == "\"icmp\" is not a protocol: tcp or udp")
    }

    /// By default every filtering profile is `web`: its devices go on from `reject_bypass`
    /// to `egress`, chosen as a profile is (MAC, then address, then the default).
    @Test func aFilteringDefaultSendsWebDevicesToEgress() throws {
        let roster = Rules.roster(
            [
                ("kid", ["02:00:00:00:00:0a", "192.168.1.0/24"]),
                ("teen", ["02:00:00:00:00:0b", "192.168.1.64/26"]),
                ("none", ["192.168.1.50"]),
            ], defaultProfile: "kid")
        var model = Rules.model(roster)
        model.egress = ["teen": .open]
        let text = try Ruleset.text(model)
        #expect(Rules.elements(text, set: "egress_web_mac") == ["02:00:00:00:00:0a"])
        // Addresses that are not `web`: teen's /26 and the exempt address.
        #expect(Rules.elements(text, set: "egress_open4") == ["192.168.1.50", "192.168.1.64/26"])
        #expect(Rules.elements(text, set: "egress_web4") == nil)
        #expect(
            Array(Rules.rules(text, chain: "reject_bypass").suffix(6)) == [
                "ip6 daddr @doh6 tcp dport 443 reject with tcp reset",
                "ether saddr @egress_web_mac goto egress",
                "ether saddr @filtered_mac return",
                "ip saddr @egress_open4 return",
                "ip6 saddr @egress_open6 return",
                "goto egress",
            ])
        #expect(text.contains("\tset egress_refused4 {\n\t\ttype ipv4_addr . inet_proto . inet_service\n"))
        #expect(text.contains("\t\tflags dynamic, timeout\n\t\ttimeout 60s\n"))
    }

    @Test func aNoneDefaultSendsOnlyListedWebDevices() throws {
        let roster = Rules.roster(
            [("kid", ["198.51.100.10", "2001:db8:1::10"]), ("teen", ["198.51.100.30"])], defaultProfile: "none")
        var model = Rules.model(roster)
        model.egress = ["kid": .web, "teen": .open]
        let text = try Ruleset.text(model)
        #expect(Rules.elements(text, set: "egress_web4") == ["198.51.100.10"])
        #expect(Rules.elements(text, set: "egress_web6") == ["2001:db8:1::10"])
        #expect(
            Array(Rules.rules(text, chain: "reject_bypass").suffix(4)) == [
                "ether saddr @egress_web_mac goto egress",
                "ether saddr @filtered_mac return",
                "ip saddr @egress_web4 goto egress",
                "ip6 saddr @egress_web6 goto egress",
            ])
    }

    /// Every profile `open`: the table is what it was before egress existed.
    @Test func allOpenMakesNoEgressRules() throws {
        var model = Rules.model(Rules.roster([("kid", ["198.51.100.10"])], defaultProfile: "none"))
        model.egress = ["kid": .open]
        let text = try Ruleset.text(model)
        #expect(!text.contains("egress"))
        #expect(Rules.rules(text, chain: "reject_bypass").last == "ip6 daddr @doh6 tcp dport 443 reject with tcp reset")
    }

    /// The chain in its order: the LAN, answers, ICMP errors, the web, DNS, the built-in
    /// set, `egress_allow`, then the record and the refusal.
    @Test func theEgressChainOpensOnlyWhatItShould() throws {
        var model = Rules.model(.single(), interfaces: ["br-lan", "wlan*"])
        model.egressAllow = [
            try EgressRule.parse("tcp/993"), try EgressRule.parse("tcp/990-995"), try EgressRule.parse("udp/1194"),
            try EgressRule.parse("tcp/22@203.0.113.0/24"), try EgressRule.parse("udp/51820@2001:db8:9::/48"),
        ]
        let rules = Rules.rules(try Ruleset.text(model), chain: "egress")
        #expect(
            rules == [
                "oifname { \"br-lan\", \"wlan*\" } return",
                "ct direction reply accept",
                "icmp type { destination-unreachable, time-exceeded, parameter-problem } accept",
                "icmpv6 type { destination-unreachable, packet-too-big, time-exceeded, parameter-problem } accept",
                "tcp dport { 80, 443 } accept",
                "meta l4proto { tcp, udp } th dport 53 accept",
                "tcp dport { 2197, 3074, 3478, 5223, 5228-5230 } accept",
                "udp dport { 88, 123, 3074, 3478-3497, 16384-16387, 16393-16402, 19302-19309 } accept",
                "tcp dport { 990-995 } accept",
                "udp dport { 1194 } accept",
                "ip daddr 203.0.113.0/24 tcp dport 22 accept",
                "ip6 daddr 2001:db8:9::/48 udp dport 51820 accept",
                "meta nfproto ipv4 meta l4proto { tcp, udp } add @egress_refused4 { ip saddr . meta l4proto . th dport }",
                "meta nfproto ipv6 meta l4proto { tcp, udp } add @egress_refused6 { ip6 saddr . meta l4proto . th dport }",
                "meta l4proto tcp reject with tcp reset",
                "meta l4proto udp reject with icmpx port-unreachable",
                "reject with icmpx admin-prohibited",
            ])
    }

    /// Every built-in entry is in docs/network.md with its source, and every port the
    /// page lists is in the table.
    @Test func theBuiltInSetIsDocumentedWithItsSources() throws {
        let path = GateRun.checkout.appendingPathComponent("docs/network.md").path
        let page = try String(contentsOfFile: path, encoding: .utf8)
        for entry in EgressBuiltIn.entries {
            let row = page.split(separator: "\n").first {
                $0.contains("`\(entry.rule)`") && $0.contains(entry.source) && $0.contains(entry.service)
            }
            #expect(row != nil, "docs/network.md has no row for \(entry.rule) (\(entry.service), \(entry.source))")
        }
    }

    /// `nft -j list set` as nft 1.0 writes it, and forms it may take (numbers for the
    /// protocol, an element without a timeout).
    @Test func refusedAttemptsReadFromNftJSON() throws {
        let json = """
            {"nftables": [{"metainfo": {"version": "1.0.6", "json_schema_version": 1}}, {"set": {"family": "inet",
            "name": "egress_refused4", "table": "phosra_gate", "type": ["ipv4_addr", "inet_proto", "inet_service"],
            "handle": 2, "size": 8192, "flags": ["timeout"], "timeout": 60, "elem": [
            {"elem": {"val": {"concat": ["198.51.100.10", "udp", 5353]}, "expires": 59}},
            {"elem": {"val": {"concat": ["198.51.100.10", 6, 8443]}, "expires": 12}},
            {"concat": ["2001:db8:1::10", "udp", 51820]},
            {"elem": {"val": {"concat": ["not an address", "udp", 1]}, "expires": 3}}]}}]}
            """
        let attempts = try EgressAttempts.parse(Array(json.utf8))
        #expect(
            attempts == [
                EgressAttempt(client: IPAddress("198.51.100.10")!, transport: .udp, port: 5353, expires: 59),
                EgressAttempt(client: IPAddress("198.51.100.10")!, transport: .tcp, port: 8443, expires: 12),
                EgressAttempt(client: IPAddress("2001:db8:1::10")!, transport: .udp, port: 51820, expires: 0),
            ])
        #expect(attempts[0].name == "udp/5353")
        let empty = #"{"nftables": [{"metainfo": {}}, {"set": {"name": "egress_refused6", "timeout": 60}}]}"#
        #expect(try EgressAttempts.parse(Array(empty.utf8)).isEmpty)
        #expect(throws: EgressAttempts.ParseError.self) { try EgressAttempts.parse(Array("Error: x".utf8)) }
    }

    /// One element is one hit however often it is read; the same port again after the
    /// element expired is a new one; a device trying many ports makes at most ten a minute.
    @Test func theTallyCountsEachElementOnceWithinTheBound() {
        let kid = IPAddress("198.51.100.10")!
        func attempt(_ port: UInt16, expires: Int, client: IPAddress = kid) -> EgressAttempt {
            EgressAttempt(client: client, transport: .udp, port: port, expires: expires)
        }
        var tally = EgressTally()
        #expect(tally.fresh([attempt(5353, expires: 59)], now: 1000) == [attempt(5353, expires: 59)])
        // Read again 5 s and 30 s later: the same element (its end moved by rounding only).
        #expect(tally.fresh([attempt(5353, expires: 53)], now: 1005).isEmpty)
        #expect(tally.fresh([attempt(5353, expires: 29)], now: 1030).isEmpty)
        // Expired at 1059 and added again at 1070: new.
        #expect(tally.fresh([attempt(5353, expires: 58)], now: 1072) == [attempt(5353, expires: 58)])
        // A scan: at most ten of one device a minute; another device is counted on its own.
        var other = EgressTally()
        let scan = (1...40).map { attempt(UInt16(1000 + $0), expires: 60) }
        #expect(other.fresh(scan, now: 2000).count == EgressTally.perDeviceLimit)
        #expect(other.fresh(scan, now: 2005).isEmpty, "the rest were seen, and are not counted later")
        let teen = IPAddress("198.51.100.30")!
        #expect(other.fresh([attempt(51820, expires: 60, client: teen)], now: 2010).count == 1)
        #expect(other.fresh([attempt(7000, expires: 60)], now: 2061).count == 1, "a new minute")
    }
}
