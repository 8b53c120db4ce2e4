import DomainMatch

/// Built-in circumvention names (docs/decisions.md#the-decision-order, step 4): the encrypted-DNS resolvers that every
/// browser and OS offers out of the box, Firefox's canary domain, and iCloud Private
/// Relay. The many other resolvers, VPNs and proxies live in the `proxy` category lists,
/// which the levels strict and moderate select.
public enum BypassList {
    public static let names: [String] = [
        "dns.google", "cloudflare-dns.com", "one.one.one.one", "dns.quad9.net", "doh.opendns.com",
        "dns.adguard.com", "doh.cleanbrowsing.org", "use-application-dns.net",
        "mask.icloud.com", "mask-h2.icloud.com", "mask-canary.icloud.com",
    ]

    public static let entries: [DomainName] = names.map { try! QueryName.parse($0) }
}
