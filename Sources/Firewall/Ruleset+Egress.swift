/// The egress part of the table (docs/network.md#egress): which filtered clients are kept
/// to the web, and the chain that keeps them there. A refused TCP or UDP attempt is put
/// into a set with a timeout (`egress_refused4`, `egress_refused6`), keyed by device,
/// protocol and port, which `firewall watch` reads and hands to the daemon to record hits
/// (`EgressAttempts`, `EgressAttemptsFile`): a flood of attempts on one port is one
/// element a minute, so one hit.
extension Ruleset {
    /// How long a refused attempt stays in the set: at most one hit per device, protocol
    /// and port in that time.
    public static let refusedTimeoutSeconds = 60
    /// Elements per family; when full, further attempts are still refused but not counted.
    static let refusedSetSize = 8192
    /// The sets `firewall watch` reads, per family.
    public static let refusedSets = ["egress_refused4", "egress_refused6"]

    /// The sets of `egress`: who is kept to the web, and the refused attempts.
    static func egressSets(_ egress: EgressSets) -> [String] {
        let addressSet = egress.defaultWeb ? "egress_open" : "egress_web"
        var lines = set("egress_web_mac", type: "ether_addr", interval: false, egress.webMACs.map(\.description))
        lines += set("\(addressSet)4", type: "ipv4_addr", interval: true, egress.addresses4.map(Self.element))
        lines += set("\(addressSet)6", type: "ipv6_addr", interval: true, egress.addresses6.map(Self.element))
        for (name, type) in zip(refusedSets, ["ipv4_addr", "ipv6_addr"]) {
            lines += [
                "\tset \(name) {", "\t\ttype \(type) . inet_proto . inet_service", "\t\tflags dynamic, timeout",
                "\t\ttimeout \(refusedTimeoutSeconds)s", "\t\tsize \(refusedSetSize)", "\t}",
            ]
        }
        return lines
    }

    /// The end of `reject_bypass`, which only filtered clients reach: those kept to the
    /// web go on to `egress`, chosen in the order a profile is (MAC, address, default).
    static func egressDispatch(_ egress: EgressSets) -> [String] {
        var lines = [
            "\t\t# Devices whose profile is egress = web reach only the web and what egress allows.",
            "\t\tether saddr @egress_web_mac goto egress",
            "\t\tether saddr @filtered_mac return",
        ]
        if egress.defaultWeb {
            lines += ["\t\tip saddr @egress_open4 return", "\t\tip6 saddr @egress_open6 return", "\t\tgoto egress"]
        } else {
            lines += ["\t\tip saddr @egress_web4 goto egress", "\t\tip6 saddr @egress_web6 goto egress"]
        }
        return lines
    }

    /// The chain `egress`: what a device kept to the web may reach, in this order.
    static func egressChain(lan: String, allow: [EgressRule]) -> [String] {
        var lines = [
            "", "\tchain egress {",
            "\t\t# Between the LAN interfaces is not the internet.",
            "\t\toifname { \(lan) } return",
            "\t\t# Answers on connections opened from outside (a port forward).",
            "\t\tct direction reply accept",
            "\t\t# ICMP errors, path MTU discovery among them.",
            "\t\ticmp type { destination-unreachable, time-exceeded, parameter-problem } accept",
            "\t\ticmpv6 type { destination-unreachable, packet-too-big, time-exceeded, parameter-problem } accept",
            "\t\t# The web: with a transparent listener it was redirected before it got here.",
            "\t\ttcp dport { 80, 443 } accept",
            "\t\t# DNS: new exchanges were redirected to the gateway; only those from before the table get here.",
            "\t\tmeta l4proto { tcp, udp } th dport 53 accept",
            "\t\t# What phones and consoles need: push, calls, the time (docs/network.md#egress).",
        ]
        for transport in EgressRule.Transport.allCases {
            let ports = mergedPorts(EgressBuiltIn.entries.map(\.rule).filter { $0.transport == transport }.map(\.ports))
            lines.append("\t\t\(transport.rawValue) dport { \(ports.map(portText).joined(separator: ", ")) } accept")
        }
        if !allow.isEmpty {
            lines.append("\t\t# egress_allow.")
            for transport in EgressRule.Transport.allCases {
                let anywhere = allow.filter { $0.transport == transport && $0.destination == nil }.map(\.ports)
                if !anywhere.isEmpty {
                    let ports = mergedPorts(anywhere).map(portText).joined(separator: ", ")
                    lines.append("\t\t\(transport.rawValue) dport { \(ports) } accept")
                }
            }
            for rule in allow {
                guard let destination = rule.destination else { continue }
                let family = destination.isV4 ? "ip" : "ip6"
                lines.append(
                    "\t\t\(family) daddr \(Self.element(destination)) \(rule.transport.rawValue) dport "
                        + "\(portText(rule.ports)) accept")
            }
        }
        lines += [
            "\t\t# Everything else: remembered a minute per device, protocol and port (the gateway reads it",
            "\t\t# as a hit), and refused at once.",
            "\t\tmeta nfproto ipv4 meta l4proto { tcp, udp } add @\(refusedSets[0]) { ip saddr . meta l4proto . th dport }",
            "\t\tmeta nfproto ipv6 meta l4proto { tcp, udp } add @\(refusedSets[1]) { ip6 saddr . meta l4proto . th dport }",
            "\t\tmeta l4proto tcp reject with tcp reset",
            "\t\tmeta l4proto udp reject with icmpx port-unreachable",
            "\t\treject with icmpx admin-prohibited",
            "\t}",
        ]
        return lines
    }
}
