import DomainMatch
import Testing

@testable import Policy

/// The built-in bypass list (docs/decisions.md#the-decision-order, step 4): the public
/// encrypted-DNS resolvers are blocked as circumvention for a client whose policy sets no
/// level at all, with the matched entry as the rule, and the operators' other hosts stay open.
@Suite struct BypassListTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let entry: String
        var testDescription: String { "\(name) → \(entry)" }
        init(_ name: String, _ entry: String) {
            self.name = name
            self.entry = entry
        }
    }

    /// A sample of each operator's names, and of names below an entry.
    static let blocked: [Case] = [
        Case("dns.google", "dns.google"), Case("dns64.dns.google", "dns.google"),
        Case("dns.google.com", "dns.google.com"), Case("8888.google", "8888.google"),
        Case("chrome.cloudflare-dns.com", "cloudflare-dns.com"),
        Case("mozilla.cloudflare-dns.com", "cloudflare-dns.com"),
        Case("1dot1dot1dot1.cloudflare-dns.com", "cloudflare-dns.com"),
        Case("family.cloudflare-dns.com", "cloudflare-dns.com"), Case("dns.cloudflare.com", "dns.cloudflare.com"),
        Case("dns11.quad9.net", "dns11.quad9.net"), Case("dns10.quad9.net", "dns10.quad9.net"),
        Case("doh.familyshield.opendns.com", "familyshield.opendns.com"),
        Case("dns.opendns.com", "dns.opendns.com"), Case("doh.umbrella.com", "doh.umbrella.com"),
        Case("dns.umbrella.com", "dns.umbrella.com"),
        Case("dns.adguard-dns.com", "dns.adguard-dns.com"),
        Case("unfiltered.adguard-dns.com", "unfiltered.adguard-dns.com"),
        Case("kids-tablet.d.adguard-dns.com", "d.adguard-dns.com"),
        Case("dns-family.adguard.com", "dns-family.adguard.com"),
        Case("dns.nextdns.io", "dns.nextdns.io"), Case("abc123.dns.nextdns.io", "dns.nextdns.io"),
        Case("chromium.dns.nextdns.io", "dns.nextdns.io"),
        Case("family-filter-dns.cleanbrowsing.org", "family-filter-dns.cleanbrowsing.org"),
        Case("dns.mullvad.net", "dns.mullvad.net"), Case("adblock.dns.mullvad.net", "dns.mullvad.net"),
        Case("p2.freedns.controld.com", "freedns.controld.com"), Case("a1b2c3.dns.controld.com", "dns.controld.com"),
        Case("dns0.eu", "dns0.eu"), Case("kids.dns0.eu", "dns0.eu"), Case("open.dns0.eu", "dns0.eu"),
        Case("child.joindns4.eu", "child.joindns4.eu"),
        Case("private.canadianshield.cira.ca", "private.canadianshield.cira.ca"),
        Case("doh.xfinity.com", "doh.xfinity.com"), Case("doh-01.spectrum.com", "doh-01.spectrum.com"),
        Case("doh.dns.sb", "dns.sb"), Case("doh.libredns.gr", "doh.libredns.gr"),
        Case("doh.applied-privacy.net", "doh.applied-privacy.net"), Case("dnspub.restena.lu", "dnspub.restena.lu"),
        Case("doh.tiar.app", "doh.tiar.app"), Case("wikimedia-dns.org", "wikimedia-dns.org"),
        Case("sky.rethinkdns.com", "sky.rethinkdns.com"), Case("dns.alidns.com", "dns.alidns.com"),
        Case("sm2.doh.pub", "doh.pub"), Case("doh.360.cn", "doh.360.cn"),
        Case("common.dot.dns.yandex.net", "common.dot.dns.yandex.net"),
        Case("DNS.Google.", "dns.google"), Case("mask-h2.icloud.com", "mask-h2.icloud.com"),
    ]

    /// The operators' own sites and neighbouring hosts are not resolvers.
    static let open = [
        "google.com", "www.google.com", "cloudflare.com", "www.cloudflare.com", "quad9.net",
        "www.quad9.net", "opendns.com", "umbrella.com", "adguard.com", "adguard-dns.io", "nextdns.io",
        "my.nextdns.io", "cleanbrowsing.org", "mullvad.net", "controld.com", "joindns4.eu", "cira.ca",
        "xfinity.com", "spectrum.com", "libredns.gr", "restena.lu", "wikipedia.org", "rethinkdns.com",
        "alidns.com", "360.cn", "yandex.net", "dns.yandex.net", "icloud.com", "www.icloud.com", "apple.com",
    ]

    @Test(arguments: blocked)
    func blocksAResolverWithItsEntry(_ item: Case) {
        for level in ["", "strict"] {
            let (engine, rules) = Fixture.engine(policy: Fixture.policy(level: level))
            let decision = engine.decide(item.name, rules: rules)
            #expect(decision.short == "block circumvention:\(item.entry)", "level \"\(level)\"")
            #expect(decision.reasonText == "circumvention:\(item.entry)")
        }
    }

    @Test(arguments: open)
    func leavesTheOperatorsOtherHostsOpen(_ name: String) {
        let (engine, rules) = Fixture.engine(policy: Fixture.policy())
        #expect(engine.decide(name, rules: rules).short == "allow default")
    }

    /// Written as they match, once each, and no entry hidden below another: an entry below
    /// another would never be the rule a hit names, and would make an allow of the outer
    /// entry lift only part of the operator's names.
    @Test func entriesAreNormalisedUniqueAndNotNested() {
        let entries = BypassList.entries.map(\.description)
        #expect(entries == BypassList.names)
        #expect(Set(entries).count == entries.count)
        for entry in BypassList.entries { #expect(entry.labelCount >= 2, "\(entry)") }
        for inner in entries {
            for outer in entries where inner != outer {
                #expect(!inner.hasSuffix("." + outer), "\(inner) is below \(outer)")
            }
        }
    }
}
