import DomainMatch
import Testing
import Zoneinfo

@testable import Policy

/// Every rule of docs/decisions.md#the-decision-order, in order, table-driven.
@Suite struct DecisionRuleTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let policy: CompiledPolicy
        var options = DecisionOptions()
        let name: String
        var at = Fixture.mondayNoon
        let expected: String
        let why: String
        var testDescription: String { "\(why): \(name) → \(expected)" }
    }

    static let downtimeNow = [CompiledPolicy.DowntimeWindow(daysOfWeek: nil, startTime: "11:00", endTime: "13:00")]

    static let cases: [Case] = [
        // 1. System allow.
        Case(
            policy: Fixture.policy(blocked: ["fly.dev"], windows: downtimeNow), name: "phosra-api.fly.dev",
            expected: "allow system", why: "API host beats a cutoff and a parent block"),
        Case(
            policy: Fixture.policy(blocked: ["fly.dev"]), name: "other.fly.dev",
            expected: "block blocked_domain:fly.dev", why: "only the API host itself is system"),
        Case(
            policy: Fixture.policy(level: "strict", windows: downtimeNow),
            options: options(alwaysAllow: ["School.example.edu"]),
            name: "www.school.example.edu", expected: "allow system", why: "always_allow covers subdomains in downtime"),
        Case(
            policy: Fixture.policy(), options: options(api: "https://api.phosra.com:8443/api/v1"),
            name: "api.phosra.com",
            expected: "allow system", why: "host of a configured API URL"),
        Case(
            policy: Fixture.policy(blocked: ["fly.dev"]), options: options(api: "https://api.phosra.com/api/v1"),
            name: "phosra-api.fly.dev", expected: "block blocked_domain:fly.dev",
            why: "default API host no longer system"),
        Case(
            policy: Fixture.policy(blocked: ["10.1.2.3"]), options: options(alwaysAllow: ["10.1.2.3"]),
            name: "10.1.2.3",
            expected: "allow system", why: "IP entry on always_allow"),
        // 2. Cutoff.
        Case(
            policy: Fixture.policy(windows: downtimeNow), name: "example.org", expected: "block downtime",
            why: "inside a downtime window"),
        Case(
            policy: Fixture.policy(allowed: ["example.org"], windows: downtimeNow), name: "example.org",
            expected: "block downtime", why: "a parent allow does not lift a cutoff"),
        Case(
            policy: Fixture.policy(
                windows: downtimeNow,
                schedule: .init(weekday: .init(start: "14:00", end: "15:00"))),
            name: "example.org", expected: "block downtime", why: "downtime named before schedule"),
        Case(
            policy: Fixture.policy(schedule: .init(weekday: .init(start: "14:00", end: "15:00"))), name: "example.org",
            expected: "block schedule", why: "outside the allowed hours"),
        Case(
            policy: Fixture.policy(windows: downtimeNow), options: options(downtimeAllow: ["homework.example"]),
            name: "www.homework.example", expected: "allow default", why: "downtime_allow skips the cutoff"),
        Case(
            policy: Fixture.policy(blocked: ["homework.example"], windows: downtimeNow),
            options: options(downtimeAllow: ["homework.example"]), name: "homework.example",
            expected: "block blocked_domain:homework.example", why: "downtime_allow skips the cutoff step only"),
        Case(
            policy: Fixture.policy(level: "strict", windows: downtimeNow),
            options: options(downtimeAllow: ["roblox.com"]),
            name: "roblox.com", expected: "block category:gaming [gaming]",
            why: "downtime_allow does not lift categories"),
        // 3. Parent lists.
        Case(
            policy: Fixture.policy(blocked: ["reddit.com"]), name: "old.reddit.com",
            expected: "block blocked_domain:reddit.com", why: "a block entry covers subdomains"),
        Case(
            policy: Fixture.policy(blocked: ["reddit.com"]), name: "notreddit.com", expected: "allow default",
            why: "label boundaries only"),
        Case(
            policy: Fixture.policy(blocked: ["ads.example.com"], allowed: ["example.com"]), name: "x.ads.example.com",
            expected: "block blocked_domain:ads.example.com", why: "a more specific parent block inside a parent allow"),
        Case(
            policy: Fixture.policy(blocked: ["ads.example.com"], allowed: ["example.com"]), name: "www.example.com",
            expected: "allow allowed_domain:example.com", why: "the allow covers the rest"),
        Case(
            policy: Fixture.policy(blocked: ["example.com"], allowed: ["good.example.com"]), name: "good.example.com",
            expected: "allow allowed_domain:good.example.com", why: "a more specific allow inside a block"),
        Case(
            policy: Fixture.policy(blocked: ["https://Example.com/x"], allowed: ["*.example.com"]), name: "example.com",
            expected: "allow allowed_domain:example.com", why: "an exact tie goes to the allow"),
        Case(
            policy: Fixture.policy(level: "strict", allowed: ["roblox.com/games/1"]), name: "roblox.com",
            expected: "block category:gaming [gaming]", why: "an allow entry with a path is skipped"),
        Case(
            policy: Fixture.policy(blocked: ["youtube.com/watch?v=1"]), name: "m.youtube.com",
            expected: "block blocked_domain:youtube.com", why: "a block entry with a path keeps its host"),
        Case(
            policy: Fixture.policy(blocked: ["203.0.113.7:443"]), name: "203.0.113.7",
            expected: "block blocked_domain:203.0.113.7", why: "IP entries match dotted-quad names"),
        Case(
            policy: Fixture.policy(blocked: ["Bücher.de"]), name: "www.xn--bcher-kva.de",
            expected: "block blocked_domain:xn--bcher-kva.de", why: "IDN entries are punycode"),
        // 4. Circumvention.
        Case(
            policy: Fixture.policy(), name: "dns.google", expected: "block circumvention:dns.google",
            why: "built-in bypass list, even with no level"),
        Case(
            policy: Fixture.policy(), name: "a.b.cloudflare-dns.com",
            expected: "block circumvention:cloudflare-dns.com",
            why: "bypass entries cover subdomains"),
        Case(
            policy: Fixture.policy(), options: options(blockBypass: false), name: "dns.google",
            expected: "allow default",
            why: "block_bypass false"),
        Case(
            policy: Fixture.policy(allowed: ["icloud.com"]), name: "mask.icloud.com",
            expected: "block circumvention:mask.icloud.com", why: "a shorter allow does not lift circumvention"),
        Case(
            policy: Fixture.policy(allowed: ["mask.icloud.com"]), name: "mask.icloud.com",
            expected: "allow allowed_domain:mask.icloud.com", why: "an allow as specific lifts circumvention"),
        Case(
            policy: Fixture.policy(allowed: ["x.dns.google"]), name: "x.dns.google",
            expected: "allow allowed_domain:x.dns.google", why: "a more specific allow lifts circumvention"),
        Case(
            policy: Fixture.policy(level: "moderate"), name: "www.nordvpn.com",
            expected: "block circumvention:nordvpn.com [proxy]",
            why: "the proxy category's lists when the level selects it"),
        Case(
            policy: Fixture.policy(level: "light"), name: "nordvpn.com", expected: "allow default",
            why: "level light does not select proxy"),
        Case(
            policy: Fixture.policy(categories: [" VPN "]), name: "nordvpn.com",
            expected: "block circumvention:nordvpn.com [proxy]",
            why: "a synonym of proxy in blocked_categories"),
        Case(
            policy: Fixture.policy(level: "strict"), options: options(blockBypass: false), name: "nordvpn.com",
            expected: "allow default", why: "without block_bypass the proxy lists are not used at all"),
        Case(
            policy: Fixture.policy(level: "strict", blocked: ["nordvpn.com"]), name: "nordvpn.com",
            expected: "block blocked_domain:nordvpn.com", why: "parent block comes before circumvention"),
        Case(
            policy: Fixture.policy(level: "strict"), name: "mask.icloud.com",
            expected: "block circumvention:mask.icloud.com",
            why: "a tie between built-in and proxy lists reads as built-in"),
        // 5. Categories.
        Case(
            policy: Fixture.policy(level: "strict"), name: "cdn.both-adult-and-social.example",
            expected: "block category:adult [adult]", why: "categories in the order of the category table"),
        Case(
            policy: Fixture.policy(categories: ["social_media"]), name: "both-adult-and-social.example",
            expected: "block category:social [social]", why: "only selected categories"),
        Case(
            policy: Fixture.policy(level: "strict", allowed: ["roblox.com"]), name: "www.roblox.com",
            expected: "allow allowed_domain:roblox.com", why: "a parent allow skips categories"),
        Case(
            policy: Fixture.policy(level: "strict", allowed: ["other.example"]), name: "roblox.com",
            expected: "block category:gaming [gaming]", why: "an unrelated allow does not"),
        Case(
            policy: Fixture.policy(level: "light"), name: "bet365.com", expected: "allow default",
            why: "level light has no gambling"),
        Case(
            policy: Fixture.policy(level: "MODERATE "), name: "bet365.com",
            expected: "block category:gambling [gambling]",
            why: "levels ignore case and white space"),
        Case(
            policy: Fixture.policy(level: "extreme"), name: "stake.com", expected: "block category:gambling [gambling]",
            why: "an unknown level acts as moderate"),
        Case(
            policy: Fixture.policy(level: "extreme"), name: "tiktok.com", expected: "allow default",
            why: "moderate has no social"),
        Case(
            policy: Fixture.policy(level: "off", categories: ["Porn", "online-games", "warez", "not-a-category"]),
            name: "fortnite.com", expected: "block category:gaming [gaming]", why: "synonyms, and no level"),
        Case(
            policy: Fixture.policy(level: "none", categories: ["trackers"]), name: "ad.doubleclick.net",
            expected: "block category:ads [ads]", why: "ads only when asked for"),
        Case(
            policy: Fixture.policy(level: "strict"), name: "ad.doubleclick.net", expected: "allow default",
            why: "no level selects ads"),
        // 6. Safe search.
        Case(
            policy: Fixture.policy(safeSearch: true), name: "www.google.com",
            expected: "rewrite safe_search → forcesafesearch.google.com", why: "google"),
        Case(
            policy: Fixture.policy(safeSearch: true, allowed: ["google.co.uk"]), name: "google.co.uk",
            expected: "rewrite safe_search → forcesafesearch.google.com", why: "also for parent-allowed names"),
        Case(
            policy: Fixture.policy(level: "strict", safeSearch: true), name: "m.youtube.com",
            expected: "rewrite safe_search → restrict.youtube.com", why: "strict YouTube for level strict"),
        Case(
            policy: Fixture.policy(level: "moderate", safeSearch: true), name: "youtube.com",
            expected: "rewrite safe_search → restrictmoderate.youtube.com", why: "moderate YouTube otherwise"),
        Case(
            policy: Fixture.policy(safeSearch: false), name: "www.google.com", expected: "allow default",
            why: "safe search off"),
        Case(
            policy: Fixture.policy(safeSearch: true, blocked: ["bing.com"]), name: "www.bing.com",
            expected: "block blocked_domain:bing.com", why: "a parent block beats safe search"),
        // 7. Allowed.
        Case(
            policy: Fixture.policy(allowed: ["khanacademy.org"]), name: "www.khanacademy.org",
            expected: "allow allowed_domain:khanacademy.org", why: "allowed_domain"),
        Case(policy: Fixture.policy(level: "strict"), name: "wikipedia.org", expected: "allow default", why: "default"),
    ]

    static func options(
        alwaysAllow: [String] = [], downtimeAllow: [String] = [], blockBypass: Bool = true,
        api: String = DecisionOptions.defaultAPI
    ) -> DecisionOptions {
        var options = DecisionOptions()
        options.alwaysAllow = alwaysAllow
        options.downtimeAllow = downtimeAllow
        options.blockBypass = blockBypass
        options.api = api
        return options
    }

    @Test(arguments: cases)
    func decides(_ item: Case) {
        let (engine, rules) = Fixture.engine(options: item.options, policy: item.policy)
        let decision = engine.decide(item.name, rules: rules, at: item.at)
        let rule = decision.rule.map { ":\($0)" } ?? ""
        let actual: String
        switch decision.reason {
        case .allowedDomain: actual = "allow allowed_domain\(rule)"
        default: actual = decision.short
        }
        #expect(actual == item.expected, "\(item.why)")
    }

    @Test func reasonTexts() {
        #expect(Decision(.block, .blockedDomain, rule: "reddit.com").reasonText == "blocked_domain:reddit.com")
        #expect(Decision(.block, .category, rule: "x.com", category: .adult).reasonText == "category:adult")
        #expect(Decision(.block, .circumvention, rule: "dns.google").reasonText == "circumvention:dns.google")
        #expect(Decision(.block, .downtime).reasonText == "downtime")
        #expect(Decision(.block, .schedule).reasonText == "schedule")
        #expect(Decision(.block, .sni, rule: "a.example").reasonText == "sni:a.example")
        #expect(Decision(.block, .ipLiteral).reasonText == "ip_literal")
        #expect(Decision(.block, .port).reasonText == "port")
    }

    @Test func selectedCategoriesAndNotes() {
        let rules = PolicyRules(
            Fixture.policy(
                level: "extreme", blocked: ["", "com", "ok.example"],
                allowed: ["a.example/page"], categories: ["Social Media", "crypto", "doh"]))
        #expect(rules.categories == [.adult, .gambling, .social, .dating, .drugs, .piracy, .malware, .phishing])
        #expect(rules.selectsProxy)
        #expect(rules.notes.unknownLevel == "extreme")
        #expect(rules.notes.unknownCategories == ["crypto"])
        #expect(rules.notes.skippedBlocked.map(\.entry) == ["", "com"])
        #expect(rules.notes.skippedAllowed.map(\.entry) == ["a.example/page"])
    }
}
