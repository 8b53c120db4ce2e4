import DNSWire
import DomainMatch

/// Names answered before any decision, never forwarded and never recorded as hits
/// (docs/dns.md#local-answers).
public enum LocalAnswer: Equatable, Sendable {
    case nxdomain
    case nodata
    /// `blocked.phosra-gate.test`, the gateway's own canary (`phosra-gate doctor` asks it):
    /// a block answer with the reason `canary` for a filtered profile, NXDOMAIN otherwise.
    case canary
    /// Sent to the server `local_forward` names for this zone instead.
    case forward(zone: DomainName)
    /// `home_name`: the gateway's own addresses, where the child's page is.
    case home

    /// The reason text of the canary's block answer (EDE 15), which `doctor` looks for.
    public static let canaryReason = "canary"
}

/// The local zones: Firefox's canary and the gateway's own, RFC 9462 discovery, ESNI, and
/// the private and special-use zones of RFC 6303, RFC 6761, RFC 8375 and the common `.lan`.
public struct LocalZones: Sendable {
    /// Zones with a configured server (`local_forward = ZONE=IP[:port]`).
    public let forwarded: Set<DomainName>
    /// `home_name` and the addresses it answers with (docs/requests-and-notifications.md).
    public let home: DomainName?
    public let homeAddresses: [IPAddress]

    public init(forwarded: Set<DomainName> = [], home: DomainName? = nil, homeAddresses: [IPAddress] = []) {
        self.forwarded = forwarded
        self.home = home
        self.homeAddresses = homeAddresses
    }

    static let privateZones: [DomainName] = {
        var zones = [
            "home.arpa", "lan", "local", "10.in-addr.arpa", "168.192.in-addr.arpa", "254.169.in-addr.arpa",
            "0.in-addr.arpa", "127.in-addr.arpa", "2.0.192.in-addr.arpa", "100.51.198.in-addr.arpa",
            "113.0.203.in-addr.arpa", "255.255.255.255.in-addr.arpa",
            "d.f.ip6.arpa", "c.f.ip6.arpa", "8.e.f.ip6.arpa", "9.e.f.ip6.arpa", "a.e.f.ip6.arpa", "b.e.f.ip6.arpa",
            "8.b.d.0.1.0.0.2.ip6.arpa",
            String(repeating: "0.", count: 32) + "ip6.arpa", "1." + String(repeating: "0.", count: 31) + "ip6.arpa",
        ]
        zones += (16...31).map { "\($0).172.in-addr.arpa" }
        zones += (64...127).map { "\($0).100.in-addr.arpa" }
        return zones.map { try! QueryName.parse($0) }
    }()

    static let canary = try! QueryName.parse("use-application-dns.net")
    /// Under `.test` (RFC 6761 §6.2), so no resolver anywhere answers it but the gateway.
    public static let blockCanary = try! QueryName.parse("blocked.phosra-gate.test")
    static let resolverArpa = try! QueryName.parse("resolver.arpa")

    static let privateSet = Set(privateZones)

    /// The local answer for `name`, or nil when it goes on to the decision. Cheap for the
    /// common name: only the canaries, `_esni.`, `.arpa`, `.lan` and `.local` are looked at
    /// further, unless `local_forward` names zones.
    public func answer(for name: DomainName) -> LocalAnswer? {
        if name == Self.canary || Self.isESNI(name) { return .nxdomain }
        if name == Self.blockCanary { return .canary }
        if let home, name == home { return .home }
        let special = Self.specialTLDs.contains { name.endsWithLabel($0) }
        if forwarded.isEmpty, !special { return nil }
        if name.isSubdomain(of: Self.resolverArpa) { return .nodata }
        // The most specific configured zone covering the name wins.
        let configured = forwarded.filter { name.isSubdomain(of: $0) }.max { $0.labelCount < $1.labelCount }
        if let configured { return .forward(zone: configured) }
        if special {
            for labels in 1...name.labelCount where Self.privateSet.contains(name.suffix(labels: labels)) {
                return .nxdomain
            }
        }
        return nil
    }

    private static let esniPrefix = Array("_esni.".utf8)

    private static func isESNI(_ name: DomainName) -> Bool {
        name.bytes.starts(with: esniPrefix)
    }
    private static let specialTLDs = ["arpa", "lan", "local"].map { Array($0.utf8) }
}
