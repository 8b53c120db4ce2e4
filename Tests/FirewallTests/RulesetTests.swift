import DomainMatch
import Policy
import TestSupport
import Testing

@testable import Firewall

/// The table's text (docs/network.md#the-firewall): who is caught — MAC, then the longest
/// address or CIDR, then the default profile — and what is done to them.
@Suite(.blocking) struct FirewallRulesetTests {
    static func roster(_ members: [(String, [String])], defaultProfile: String) -> ProfileRoster {
        ProfileRoster(
            members: members.map { name, clients in .init(name: name, clients: clients.map { ClientEntry($0)! }) },
            defaultProfile: defaultProfile)
    }

    static func model(
        _ roster: ProfileRoster, interfaces: [String] = ["br-lan"], dns: RedirectPorts = RedirectPorts(53),
        transparent: RedirectPorts? = nil, doh: [String] = ["8.8.8.8", "2001:4860:4860::8888"],
        pagePorts: [UInt16] = []
    ) -> FirewallModel {
        FirewallModel(
            lanInterfaces: interfaces.map { InterfaceName($0)! }, dns: dns, transparent: transparent, roster: roster,
            doh: doh.map { AddressRange($0)! }, pagePorts: pagePorts)
    }

    /// `line` without leading and trailing tabs and spaces (and `also`).
    static func trimmed(_ line: Substring, also: Character? = nil) -> String {
        let isPadding = { (character: Character) in character == " " || character == "\t" || character == also }
        var text = line.drop(while: isPadding)
        while let last = text.last, isPadding(last) { text = text.dropLast() }
        return String(text)
    }

    /// The lines of set `name`'s elements, trimmed, without the commas.
    static func elements(_ text: String, set name: String) -> [String]? {
        guard let start = text.range(of: "\tset \(name) {\n") else { return nil }
        let body = text[start.upperBound...]
        guard let end = body.range(of: "\n\t}\n") else { return nil }
        let lines = body[..<end.lowerBound].split(separator: "\n").map { trimmed($0, also: ",") }
        guard let open = lines.firstIndex(of: "elements = {") else { return [] }
        return Array(lines[(open + 1)...].prefix { $0 != "}" })
    }

    /// The rules of chain `name`, trimmed, without comments.
    static func rules(_ text: String, chain name: String) -> [String] {
        guard let start = text.range(of: "\tchain \(name) {\n"), let end = text[start.upperBound...].range(of: "\n\t}")
        else { return [] }
        return text[start.upperBound..<end.lowerBound].split(separator: "\n").map { trimmed($0) }
            .filter { !$0.hasPrefix("#") }
    }

    /// `default_profile` names a profile: every LAN client is caught except those whose
    /// entry is in `none`; a MAC is looked at before an address.
    @Test func aFilteringDefaultCatchesEveryoneButTheExempt() throws {
        let roster = Self.roster(
            [
                ("kid", ["02:00:00:00:00:0a", "192.168.1.0/24"]),
                ("none", ["192.168.1.50", "02:00:00:00:00:99", "2001:db8::/64"]),
            ], defaultProfile: "kid")
        let text = try Ruleset.text(Self.model(roster))
        #expect(Self.elements(text, set: "exempt_mac") == ["02:00:00:00:00:99"])
        #expect(Self.elements(text, set: "filtered_mac") == ["02:00:00:00:00:0a"])
        #expect(Self.elements(text, set: "exempt4") == ["192.168.1.50"])
        #expect(Self.elements(text, set: "exempt6") == ["2001:db8::/64"])
        #expect(Self.elements(text, set: "filtered4") == nil)
        #expect(
            Self.rules(text, chain: "prerouting") == [
                "type nat hook prerouting priority dstnat; policy accept;",
                "iifname != { \"br-lan\" } return",
                "ether saddr @exempt_mac return",
                "ether saddr @filtered_mac goto redirect_filtered",
                "ip saddr @exempt4 return",
                "ip6 saddr @exempt6 return",
                "goto redirect_filtered",
            ])
        #expect(
            Self.rules(text, chain: "forward") == [
                "type filter hook forward priority filter; policy accept;",
                "iifname != { \"br-lan\" } return",
                "ether saddr @exempt_mac return",
                "ether saddr @filtered_mac goto reject_bypass",
                "ip saddr @exempt4 return",
                "ip6 saddr @exempt6 return",
                "goto reject_bypass",
            ])
    }

    /// `default_profile = none`: only clients listed in a filtering profile are caught.
    @Test func theNoneDefaultCatchesOnlyListedClients() throws {
        let roster = Self.roster(
            [
                ("alice", ["02:00:00:00:00:0a", "198.51.100.10"]),
                ("bob", ["198.51.100.11", "2001:db8:1::b"]),
            ], defaultProfile: "none")
        let text = try Ruleset.text(Self.model(roster))
        #expect(Self.elements(text, set: "filtered_mac") == ["02:00:00:00:00:0a"])
        #expect(Self.elements(text, set: "exempt_mac") == [])
        // Two neighbouring addresses of two profiles: one block.
        #expect(Self.elements(text, set: "filtered4") == ["198.51.100.10/31"])
        #expect(Self.elements(text, set: "filtered6") == ["2001:db8:1::b"])
        #expect(Self.elements(text, set: "exempt4") == nil)
        #expect(
            Self.rules(text, chain: "prerouting") == [
                "type nat hook prerouting priority dstnat; policy accept;",
                "iifname != { \"br-lan\" } return",
                "ether saddr @exempt_mac return",
                "ether saddr @filtered_mac goto redirect_filtered",
                "ip saddr @filtered4 goto redirect_filtered",
                "ip6 saddr @filtered6 goto redirect_filtered",
            ])
        #expect(!text.contains("\t\tgoto "))
    }

    /// A filtering profile's address inside an exempt CIDR is filtered (the longest entry
    /// wins), and an exempt one inside a filtering CIDR is not.
    @Test func theLongestEntryWins() throws {
        let filteringDefault = Self.roster(
            [("none", ["10.0.0.0/8"]), ("kid", ["10.1.2.3", "10.1.0.0/16"]), ("adult", ["10.1.2.0/30"])],
            defaultProfile: "kid")
        let exempt = try #require(Self.elements(try Ruleset.text(Self.model(filteringDefault)), set: "exempt4"))
        let exemptRanges = exempt.map { AddressRange($0)! }
        func isExempt(_ text: String) -> Bool { exemptRanges.contains { $0.contains(IPAddress(text)!) } }
        #expect(isExempt("10.0.0.1"))
        #expect(isExempt("10.255.255.255"))
        #expect(!isExempt("10.1.0.1"))
        #expect(!isExempt("10.1.2.3"))
        #expect(!isExempt("10.1.2.2"))  // adult's /30 filters too
        #expect(!isExempt("11.0.0.0"))
        // The /8 less a /16: eight blocks, one per halving, not 2^24 - 2^16 addresses.
        #expect(exempt.count == 8, "\(exempt)")

        let noneDefault = Self.roster(
            [("kid", ["192.168.0.0/16"]), ("none", ["192.168.7.0/24", "192.168.7.9"])], defaultProfile: "none")
        let filtered = try #require(Self.elements(try Ruleset.text(Self.model(noneDefault)), set: "filtered4"))
        let ranges = filtered.map { AddressRange($0)! }
        #expect(ranges.contains { $0.contains(IPAddress("192.168.1.1")!) })
        #expect(!ranges.contains { $0.contains(IPAddress("192.168.7.1")!) })
        #expect(!ranges.contains { $0.contains(IPAddress("192.168.7.9")!) })
    }

    @Test func dnsIsRedirectedForBothFamiliesAndBypassesRejected() throws {
        let text = try Ruleset.text(
            Self.model(.single(), dns: RedirectPorts(v4: 53, v6: 5353), doh: ["1.1.1.1", "2606:4700:4700::1111"]))
        #expect(
            Self.rules(text, chain: "redirect_filtered") == [
                "meta nfproto ipv4 meta l4proto { tcp, udp } th dport 53 fib daddr type != local redirect to :53",
                "meta nfproto ipv6 meta l4proto { tcp, udp } th dport 53 fib daddr type != local redirect to :5353",
            ])
        #expect(
            Self.rules(text, chain: "reject_bypass").prefix(4) == [
                "tcp dport 853 reject with tcp reset",
                "udp dport { 443, 784, 853, 8853 } reject with icmpx port-unreachable",
                "ip daddr @doh4 tcp dport 443 reject with tcp reset",
                "ip6 daddr @doh6 tcp dport 443 reject with tcp reset",
            ])
        #expect(Self.elements(text, set: "doh4") == ["1.1.1.1"])
        #expect(Self.elements(text, set: "doh6") == ["2606:4700:4700::1111"])
        // One profile for everyone: no entries, the default filters.
        #expect(Self.elements(text, set: "exempt4") == [])
        #expect(Self.rules(text, chain: "forward").last == "goto reject_bypass")
    }

    @Test func aTransparentListenerTakesTheWebButNotDoHResolvers() throws {
        let text = try Ruleset.text(Self.model(.single(), transparent: RedirectPorts(3129)))
        #expect(
            Self.rules(text, chain: "redirect_filtered").suffix(4) == [
                "ip daddr @doh4 tcp dport 443 return",
                "ip6 daddr @doh6 tcp dport 443 return",
                "meta nfproto ipv4 tcp dport { 80, 443 } fib daddr type != local redirect to :3129",
                "meta nfproto ipv6 tcp dport { 80, 443 } fib daddr type != local redirect to :3129",
            ])
        let without = try Ruleset.text(Self.model(.single()))
        #expect(!Self.rules(without, chain: "redirect_filtered").contains { $0.contains("dport { 80, 443 }") })
        #expect(Self.rules(without, chain: "redirect_filtered").count == 2)
    }

    /// Only prerouting and forward, both behind the LAN interface test: the gateway's own
    /// connections (output, input) are never in the table.
    @Test func theGatewaysOwnTrafficIsNeverTouched() throws {
        let text = try Ruleset.text(Self.model(.single(), interfaces: ["br-lan", "wlan*"]))
        let hooks = text.split(separator: "\n").filter { $0.contains(" hook ") }.map { Self.trimmed($0) }
        #expect(
            hooks == [
                "type nat hook prerouting priority dstnat; policy accept;",
                "type filter hook forward priority filter; policy accept;",
            ], "no input chain without the page's ports")
        for chain in ["prerouting", "forward"] {
            #expect(Self.rules(text, chain: chain)[1] == "iifname != { \"br-lan\", \"wlan*\" } return")
        }
    }

    /// The parent's page: its ports accepted from the LAN interfaces and loopback, dropped
    /// from anywhere else (a gateway that is the router has the internet on another
    /// interface); nothing else reaching the gateway is touched.
    @Test func thePagesPortsAreOpenOnlyOnTheLANAndLoopback() throws {
        let text = try Ruleset.text(
            Self.model(.single(), interfaces: ["br-lan", "wlan*"], pagePorts: [8443, 8080, 8443]))
        #expect(
            text.contains("\t\ttype filter hook input priority filter; policy accept;\n"),
            "the gateway's other services stay as they are")
        #expect(
            Self.rules(text, chain: "input") == [
                "type filter hook input priority filter; policy accept;",
                "iifname { \"lo\", \"br-lan\", \"wlan*\" } tcp dport { 8080, 8443 } accept",
                "tcp dport { 8080, 8443 } drop",
            ])
        let off = try Ruleset.text(Self.model(.single(), pagePorts: []))
        #expect(!off.contains("chain input"), "no page, no rule")
    }

    @Test func withoutLANInterfacesThereIsNoTable() {
        #expect(throws: FirewallError.noLANInterfaces) { try Ruleset.text(Self.model(.single(), interfaces: [])) }
        #expect(throws: FirewallError.noLANInterfaces) {
            try Ruleset.applyScript(Self.model(.single(), interfaces: []))
        }
    }

    /// The same configuration in another order prints the same table.
    @Test func theTextIsDeterministic() throws {
        let one = Self.roster(
            [("a", ["02:00:00:00:00:02", "10.0.0.2", "10.0.0.1", "2001:db8::2"]), ("none", ["02:00:00:00:00:01"])],
            defaultProfile: "a")
        let two = Self.roster(
            [("none", ["02:00:00:00:00:01"]), ("a", ["2001:db8::2", "10.0.0.1", "02:00:00:00:00:02", "10.0.0.2"])],
            defaultProfile: "a")
        let doh = ["9.9.9.9", "1.1.1.1", "2620:fe::fe", "1.1.1.1", "1.1.1.0/24"]
        let first = try Ruleset.text(Self.model(one, doh: doh))
        #expect(first == (try Ruleset.text(Self.model(two, doh: doh.reversed()))))
        // Duplicates and covered entries merged.
        #expect(Self.elements(first, set: "doh4") == ["1.1.1.0/24", "9.9.9.9"])
        #expect(
            try Ruleset.applyScript(Self.model(one, doh: doh)).hasPrefix(
                "add table inet phosra_gate\ndelete table inet phosra_gate\n# Written by phosra-gate firewall"))
    }

    @Test func interfaceNamesAreWhatTheKernelAndNftAccept() {
        for good in ["br-lan", "eth0", "wlan0.1", "enp3s0", "wg_0", "veth0@x", "wlan*", "123456789012345"] {
            #expect(InterfaceName(good) != nil, "\(good)")
        }
        for bad in ["", "1234567890123456", "br lan", "eth\"0", "*", "a*b", "eth0;", "brück"] {
            #expect(InterfaceName(bad) == nil, "\(bad)")
        }
    }
}
