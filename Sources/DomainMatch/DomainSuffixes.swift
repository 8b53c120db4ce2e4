/// A short list of domains, each covering itself and every name below it: `rebind_allow`
/// (docs/dns.md#what-answers-may-carry). Looked through in order; meant for a handful of
/// entries, asked only on the rare answer that holds a local address.
public struct DomainSuffixes: Sendable, Equatable {
    public let domains: [DomainName]

    public init(_ domains: [DomainName]) { self.domains = domains }

    /// `rebind_allow`'s default: the local names of RFC 8375 (`home.arpa`), RFC 6762
    /// (`local`), ICANN's private-use `internal`, and the common `lan`.
    public static let localNames = DomainSuffixes(
        ["home.arpa", "lan", "local", "internal"].map { try! QueryName.parse($0) })

    /// Whether `name` is one of the domains or lies below one.
    public func covers(_ name: DomainName) -> Bool {
        for index in 0..<domains.count where name.isSubdomain(of: domains[index]) { return true }
        return false
    }
}
