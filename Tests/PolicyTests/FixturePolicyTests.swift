import DomainMatch
import Foundation
import Testing
import Zoneinfo

@testable import Policy

/// The example policies as the real server emits them, decoded and decided.
@Suite struct FixturePolicyTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Fixtures")

    static func load(_ name: String) throws -> CompiledPolicy {
        let data = try Data(contentsOf: directory.appendingPathComponent(name))
        return try CompiledPolicy.decode(Array(data))
    }

    static let fixtureNames = [
        "policy-age07-quicksetup-recommended.json",
        "policy-age10-quicksetup-plus-parent-web-rules.json",
        "policy-age15-quicksetup-relaxed.json",
        "policy-edge-emergency-lockdown-age12.json",
    ]

    @Test(arguments: fixtureNames)
    func everyFixtureDecodes(name: String) throws {
        let policy = try Self.load(name)
        #expect(policy.version >= 1)
        #expect(policy.status == "active")
        #expect(!policy.childID.isEmpty && !policy.policyID.isEmpty)
    }

    private func decide(_ fixture: String, _ names: [String], at local: LocalDateTime) throws -> [String] {
        let (engine, rules) = Fixture.engine(policy: try Self.load(fixture))
        return names.map { engine.decide($0, rules: rules, at: local).short }
    }

    @Test func age07Strict() throws {
        let policy = try Self.load("policy-age07-quicksetup-recommended.json")
        #expect(PolicyRules(policy).level == .strict)
        #expect(PolicyRules(policy).notes == PolicyNotes())
        let noon = try decide(
            "policy-age07-quicksetup-recommended.json",
            ["pornhub.com", "www.roblox.com", "www.google.com", "youtube.com", "tiktok.com", "wikipedia.org"],
            at: Fixture.at(.wednesday, 12))
        #expect(
            noon == [
                "block category:adult [adult]", "block category:gaming [gaming]",
                "rewrite safe_search → forcesafesearch.google.com", "rewrite safe_search → restrict.youtube.com",
                "block category:social [social]", "allow default",
            ])
        let evening = try decide(
            "policy-age07-quicksetup-recommended.json", ["wikipedia.org"], at: Fixture.at(.wednesday, 20))
        #expect(evening == ["block schedule"])
        let saturday = try decide(
            "policy-age07-quicksetup-recommended.json", ["wikipedia.org"], at: Fixture.at(.saturday, 20, 59))
        #expect(saturday == ["allow default"])
    }

    @Test func age10ParentRules() throws {
        let file = "policy-age10-quicksetup-plus-parent-web-rules.json"
        let rules = PolicyRules(try Self.load(file))
        #expect(rules.level == .moderate)
        #expect(rules.categories == [.adult, .gambling, .social, .dating, .drugs, .piracy, .malware, .phishing])
        #expect(rules.notes == PolicyNotes())
        let noon = try decide(
            file,
            [
                "reddit.com", "boards.4chan.org", "www.tiktok.com", "tiktok.com", "discord.gg",
                "www.khanacademy.org", "scratch.mit.edu", "mit.edu", "youtube.com", "roblox.com",
            ],
            at: Fixture.at(.tuesday, 12))
        #expect(
            noon == [
                "block blocked_domain:reddit.com", "block blocked_domain:4chan.org",
                "block blocked_domain:www.tiktok.com", "block category:social [social]",
                "block blocked_domain:discord.gg", "allow allowed_domain", "allow allowed_domain", "allow default",
                "rewrite safe_search → restrictmoderate.youtube.com", "allow default",
            ])
        // Downtime 21:30→06:30 starting Sun, Mon, Tue, Wed, Thu.
        #expect(try decide(file, ["khanacademy.org"], at: Fixture.at(.sunday, 21, 45)) == ["block downtime"])
        #expect(try decide(file, ["khanacademy.org"], at: Fixture.at(.monday, 6, 0)) == ["block downtime"])
        #expect(
            try decide(file, ["khanacademy.org"], at: Fixture.at(.friday, 6, 0)) == ["block downtime"], "from Thursday")
        #expect(
            try decide(file, ["khanacademy.org"], at: Fixture.at(.friday, 21, 45)) == ["block schedule"],
            "Friday is not a downtime day")
        #expect(try decide(file, ["khanacademy.org"], at: Fixture.at(.saturday, 6, 0)) == ["block schedule"])
        #expect(try decide(file, ["khanacademy.org"], at: Fixture.at(.saturday, 9, 0)) == ["allow allowed_domain"])
    }

    @Test func age15Light() throws {
        let file = "policy-age15-quicksetup-relaxed.json"
        let names = [
            "omegle.com", "www.chatroulette.com", "bet365.com", "pornhub.com", "dns.google", "nordvpn.com",
            "tiktok.com",
        ]
        #expect(
            try decide(file, names, at: Fixture.at(.thursday, 16)) == [
                "block blocked_domain:omegle.com", "block blocked_domain:chatroulette.com", "allow default",
                "block category:adult [adult]", "block circumvention:dns.google", "allow default", "allow default",
            ])
        #expect(try decide(file, ["tiktok.com"], at: Fixture.at(.thursday, 22, 30)) == ["block schedule"])
    }

    @Test func emergencyLockdownBlocksEverythingButTheAPI() throws {
        let file = "policy-edge-emergency-lockdown-age12.json"
        for day in Weekday.allCases {
            #expect(
                try decide(file, ["www.google.com", "khanacademy.org"], at: Fixture.at(day, 0)) == [
                    "block downtime", "block downtime",
                ])
            #expect(try decide(file, ["phosra-api.fly.dev"], at: Fixture.at(day, 23, 59)) == ["allow system"])
        }
        #expect(PolicyRules(try Self.load(file)).safeSearch == false)
    }
}
