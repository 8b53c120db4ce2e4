import DomainMatch
import Policy

/// Why a model makes no table.
public enum FirewallError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Without LAN interfaces the table would catch nothing, which would look like
    /// enforcement while being none.
    case noLANInterfaces

    public var description: String {
        switch self {
        case .noLANInterfaces: "no LAN interfaces: the firewall would catch nothing"
        }
    }
}

/// The nftables table `inet phosra_gate` (docs/network.md#the-firewall) as the text
/// `nft -f` reads. Two hooks on traffic entering from the LAN interfaces: `prerouting`
/// (nat) redirects DNS, and TCP 80/443 when there is a transparent listener; `forward`
/// (filter) rejects what would go around the gateway, and keeps the devices of `egress = web`
/// profiles to the web (Ruleset+Egress.swift). A third, `input` (filter), drops the
/// parent's page's ports on every interface but the LAN's and loopback, so a gateway that
/// is also the router never shows its page to the internet. The gateway's own traffic
/// (its upstream queries, API calls, list downloads) leaves through `output`, which the
/// table has no chain for, so it is never touched. The text is the same for the same
/// model: elements are sorted and nothing depends on the time or the host.
public enum Ruleset {
    public static let family = "inet"
    public static let table = "phosra_gate"

    /// DNS-over-TLS and DNS-over-QUIC (853), DNS-over-QUIC's early port (784) and
    /// AdGuard's (8853), and QUIC itself (443): rejected on UDP.
    static let rejectedUDPPorts: [UInt16] = [443, 784, 853, 8853]

    /// The table, for `firewall print` and inside `applyScript`.
    public static func text(_ model: FirewallModel) throws(FirewallError) -> String {
        guard !model.lanInterfaces.isEmpty else { throw .noLANInterfaces }
        let clients = ClientSets(model.roster)
        let doh4 = PrefixPartition.union(model.doh.filter(\.isV4), bitWidth: 32)
        let doh6 = PrefixPartition.union(model.doh.filter { !$0.isV4 }, bitWidth: 128)
        let lan = model.lanInterfaces.map { "\"\($0.text)\"" }.joined(separator: ", ")
        let addressSet = clients.defaultFiltered ? "exempt" : "filtered"
        let egress = EgressSets(model.roster) { (model.egress[$0] ?? .web) == .web }

        var lines: [String] = [
            "# Written by phosra-gate firewall (docs/network.md): traffic entering from the LAN interfaces,",
            "# from clients whose profile filters, cannot go around the gateway. Replaced whole by",
            "# `phosra-gate firewall apply`, removed by `phosra-gate firewall remove`; do not edit.",
            "table \(family) \(table) {",
        ]
        lines += set("exempt_mac", type: "ether_addr", interval: false, clients.exemptMACs.map(\.description))
        lines += set("filtered_mac", type: "ether_addr", interval: false, clients.filteredMACs.map(\.description))
        lines += set(
            "\(addressSet)4", type: "ipv4_addr", interval: true, clients.addresses4.map(Self.element))
        lines += set(
            "\(addressSet)6", type: "ipv6_addr", interval: true, clients.addresses6.map(Self.element))
        lines += set("doh4", type: "ipv4_addr", interval: true, doh4.map(Self.element))
        lines += set("doh6", type: "ipv6_addr", interval: true, doh6.map(Self.element))
        if egress.anyWeb { lines += egressSets(egress) }

        lines += ["", "\tchain prerouting {", "\t\ttype nat hook prerouting priority dstnat; policy accept;"]
        lines += catchFiltered(lan: lan, clients: clients, addressSet: addressSet, action: "redirect_filtered")
        lines += ["\t}"]

        lines += [
            "", "\tchain redirect_filtered {",
            "\t\t# DNS to any server but the gateway is answered by the gateway: hard-coded resolvers too.",
            "\t\tmeta nfproto ipv4 meta l4proto { tcp, udp } th dport 53 fib daddr type != local "
                + "redirect to :\(model.dns.v4)",
            "\t\tmeta nfproto ipv6 meta l4proto { tcp, udp } th dport 53 fib daddr type != local "
                + "redirect to :\(model.dns.v6)",
        ]
        if let transparent = model.transparent {
            lines += [
                "\t\t# DNS-over-HTTPS resolvers go on to the forward chain, which refuses them.",
                "\t\tip daddr @doh4 tcp dport 443 return",
                "\t\tip6 daddr @doh6 tcp dport 443 return",
                "\t\t# Web traffic to the transparent listener, which decides it by its name.",
                "\t\tmeta nfproto ipv4 tcp dport { 80, 443 } fib daddr type != local redirect to :\(transparent.v4)",
                "\t\tmeta nfproto ipv6 tcp dport { 80, 443 } fib daddr type != local redirect to :\(transparent.v6)",
            ]
        }
        lines += ["\t}"]

        if !model.pagePorts.isEmpty {
            let ports = model.pagePorts.map(String.init).joined(separator: ", ")
            lines += [
                "", "\tchain input {", "\t\ttype filter hook input priority filter; policy accept;",
                "\t\t# The parent's page (web_listen, web_http_listen): from the LAN and this host only.",
                "\t\tiifname { \"lo\", \(lan) } tcp dport { \(ports) } accept",
                "\t\ttcp dport { \(ports) } drop",
                "\t}",
            ]
        }

        lines += ["", "\tchain forward {", "\t\ttype filter hook forward priority filter; policy accept;"]
        lines += catchFiltered(lan: lan, clients: clients, addressSet: addressSet, action: "reject_bypass")
        lines += ["\t}"]

        let udpPorts = rejectedUDPPorts.map(String.init).joined(separator: ", ")
        lines += [
            "", "\tchain reject_bypass {",
            "\t\t# DNS-over-TLS: a reset, so the client falls back to plain DNS at once.",
            "\t\ttcp dport 853 reject with tcp reset",
            "\t\t# DNS-over-QUIC and QUIC: port unreachable, so clients fall back to DNS and TCP at once.",
            "\t\tudp dport { \(udpPorts) } reject with icmpx port-unreachable",
            "\t\t# Known DNS-over-HTTPS resolvers.",
            "\t\tip daddr @doh4 tcp dport 443 reject with tcp reset",
            "\t\tip6 daddr @doh6 tcp dport 443 reject with tcp reset",
        ]
        if egress.anyWeb { lines += egressDispatch(egress) }
        lines.append("\t}")
        if egress.anyWeb { lines += egressChain(lan: lan, allow: model.egressAllow) }
        lines.append("}")
        // After the `table` line, a hash of everything else: see TableFingerprint.
        let header = lines.firstIndex { $0.hasPrefix("table ") }! + 1
        lines.insert(TableFingerprint.line(TableFingerprint.of(lines.joined(separator: "\n"))), at: header)
        return lines.joined(separator: "\n") + "\n"
    }

    /// The fingerprint the table of `model` carries (TableFingerprint): equal for equal tables.
    public static func fingerprint(_ model: FirewallModel) throws(FirewallError) -> String {
        TableFingerprint.find(in: try text(model))!
    }

    /// `nft -f` input that replaces the table in one transaction: `add` makes sure there
    /// is a table to delete, so the first apply and every later one are the same script.
    public static func applyScript(_ model: FirewallModel) throws(FirewallError) -> String {
        "add table \(family) \(table)\ndelete table \(family) \(table)\n" + (try text(model))
    }

    /// `nft -f` input that deletes the table, and succeeds when there is none.
    public static let removeScript = "add table \(family) \(table)\ndelete table \(family) \(table)\n"

    /// The rules that send a filtered client's packet to `action` and let every other
    /// packet pass, in the order a profile is chosen: MAC, then address, then the default.
    private static func catchFiltered(
        lan: String, clients: ClientSets, addressSet: String, action: String
    ) -> [String] {
        var lines = [
            "\t\tiifname != { \(lan) } return",
            "\t\tether saddr @exempt_mac return",
            "\t\tether saddr @filtered_mac goto \(action)",
        ]
        if clients.defaultFiltered {
            lines += [
                "\t\tip saddr @exempt4 return",
                "\t\tip6 saddr @exempt6 return",
                "\t\tgoto \(action)",
            ]
        } else {
            lines += [
                "\t\tip saddr @filtered4 goto \(action)",
                "\t\tip6 saddr @filtered6 goto \(action)",
            ]
        }
        return lines
    }

    static func set(_ name: String, type: String, interval: Bool, _ elements: [String]) -> [String] {
        var lines = ["\tset \(name) {", "\t\ttype \(type)"]
        if interval { lines.append("\t\tflags interval") }
        if !elements.isEmpty {
            lines.append("\t\telements = {")
            lines += elements.enumerated().map { index, element in
                "\t\t\t\(element)" + (index < elements.count - 1 ? "," : "")
            }
            lines.append("\t\t}")
        }
        lines.append("\t}")
        return lines
    }

    /// A set element: the address alone for a single address, else the CIDR.
    static func element(_ range: AddressRange) -> String {
        range.prefixLength == (range.isV4 ? 32 : 128) ? "\(range.address)" : "\(range)"
    }
}

extension AddressRange {
    var isV4: Bool {
        if case .v4 = address { return true }
        return false
    }
}
