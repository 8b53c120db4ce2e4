import DomainMatch

/// Built-in circumvention names (docs/decisions.md#the-decision-order, step 4): the
/// well-known public encrypted-DNS resolvers (DNS-over-HTTPS and DNS-over-TLS host names),
/// Firefox's canary domain and iCloud Private Relay. They are blocked for every client
/// whatever its level (the unfiltered profile `none` included, while `block_bypass` is on),
/// since any one of them answers names behind the gateway's back.
/// The many smaller resolvers, VPNs and proxies live in the `proxy` category lists, which
/// the levels strict and moderate select.
///
/// An entry covers itself and every name below it, so one entry stands for an operator's
/// variants where they share a parent used only for DNS (`dns.nextdns.io` covers
/// `chromium.dns.nextdns.io` and `<config>.dns.nextdns.io`); elsewhere each host is listed.
/// The host names were checked against the built-in DNS-over-HTTPS provider lists of
/// Chromium (`net/dns/public/doh_provider_entry.cc`) and Firefox, the DNS-over-HTTPS page of
/// curl's wiki, AdGuard's list of known DNS providers and the DNSCrypt project's public
/// resolver list. Resolvers reached by bare address
/// (`https://1.1.1.1/dns-query`) are not names: the firewall's address sets handle those.
public enum BypassList {
    public static let names: [String] = [
        // Firefox: the canary domain whose NXDOMAIN tells it the network filters DNS.
        "use-application-dns.net",
        // Apple iCloud Private Relay.
        "mask.icloud.com", "mask-h2.icloud.com", "mask-canary.icloud.com",

        // Google Public DNS (Chromium's DoT names for it); dns.google covers dns64.dns.google.
        "dns.google", "dns.google.com", "8888.google",
        // Cloudflare: cloudflare-dns.com covers 1dot1dot1dot1., family., security., dns64.,
        // and the browsers' own mozilla. and chrome.cloudflare-dns.com.
        "cloudflare-dns.com", "one.one.one.one", "dns.cloudflare.com",
        // Quad9: secure, unfiltered (10), with ECS (11) and unfiltered with ECS (12).
        "dns.quad9.net", "dns9.quad9.net", "dns10.quad9.net", "dns11.quad9.net", "dns12.quad9.net",
        // Cisco OpenDNS and Umbrella: DoH and DoT names of the standard, FamilyShield and
        // sandbox resolvers (familyshield. and sandbox. cover their doh. hosts).
        "doh.opendns.com", "dns.opendns.com", "familyshield.opendns.com", "sandbox.opendns.com",
        "doh.umbrella.com", "dns.umbrella.com",
        // AdGuard DNS: default, family and unfiltered, their older adguard.com names, and
        // d.adguard-dns.com, under which every private (per-account) resolver lives.
        "dns.adguard-dns.com", "family.adguard-dns.com", "unfiltered.adguard-dns.com", "d.adguard-dns.com",
        "dns.adguard.com", "dns-family.adguard.com", "dns-unfiltered.adguard.com",
        // NextDNS: dns.nextdns.io covers anycast., chromium., firefox., trr. and every
        // configuration's own <id>.dns.nextdns.io.
        "dns.nextdns.io", "dns1.nextdns.io", "dns2.nextdns.io",
        // CleanBrowsing: DoH, and the DoT names of its three filters.
        "doh.cleanbrowsing.org", "family-filter-dns.cleanbrowsing.org", "adult-filter-dns.cleanbrowsing.org",
        "security-filter-dns.cleanbrowsing.org",
        // Mullvad DNS: dns.mullvad.net covers adblock., base., extended., family. and all.
        "dns.mullvad.net", "doh.mullvad.net",
        // Control D: the free resolvers (p0. to p3.freedns.controld.com) and the per-account ones.
        "freedns.controld.com", "dns.controld.com",
        // dns0.eu (closed in 2025; the domain covers zero., kids. and open.).
        "dns0.eu",
        // DNS4EU, the EU's public resolver.
        "protective.joindns4.eu", "child.joindns4.eu", "noads.joindns4.eu", "child-noads.joindns4.eu",
        "unfiltered.joindns4.eu",
        // CIRA Canadian Shield (Canada; in Firefox's resolver list).
        "private.canadianshield.cira.ca", "protected.canadianshield.cira.ca", "family.canadianshield.cira.ca",
        // Comcast Xfinity (in Chromium's and Firefox's lists).
        "doh.xfinity.com", "dot.xfinity.com",
        // Other ISPs and registries in Chromium's or Firefox's lists: Cox, Charter Spectrum,
        // Shaw, Quickline, Levonet, CZ.NIC, IIJ.
        "doh.cox.net", "dot.cox.net", "doh-01.spectrum.com", "doh-02.spectrum.com", "dns.shaw.ca",
        "doh.quickline.ch", "dot.quickline.ch", "dns.levonet.sk", "odvr.nic.cz", "public.dns.iij.jp",
        // DNS.SB: dns.sb is its DoT name and covers doh.dns.sb.
        "dns.sb", "dot.sb",
        // LibreDNS.
        "doh.libredns.gr", "dot.libredns.gr",
        // Foundation for Applied Privacy (and its older name).
        "doh.applied-privacy.net", "dot1.applied-privacy.net", "doh.appliedprivacy.net",
        // RESTENA (Luxembourg).
        "dnspub.restena.lu",
        // Tiarap (Privacy-First DNS).
        "doh.tiar.app", "dot.tiar.app", "jp.tiar.app", "doh.tiarap.org", "jp.tiarap.org",
        // Wikimedia DNS.
        "wikimedia-dns.org",
        // Rethink DNS, the resolver behind a popular Android firewall app.
        "basic.rethinkdns.com", "sky.rethinkdns.com", "max.rethinkdns.com",
        // Alibaba AliDNS.
        "dns.alidns.com",
        // Tencent DNSPod (doh.pub covers sm2.doh.pub).
        "doh.pub", "dns.pub", "dot.pub",
        // Qihoo 360.
        "doh.360.cn", "dot.360.cn",
        // Yandex DNS: basic, safe and family.
        "common.dot.dns.yandex.net", "safe.dot.dns.yandex.net", "family.dot.dns.yandex.net",
    ]

    public static let entries: [DomainName] = names.map { try! QueryName.parse($0) }
}
