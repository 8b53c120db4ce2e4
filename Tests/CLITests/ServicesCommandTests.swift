import Foundation
import TestSupport
import Testing

/// `phosra-gate services` and `services check` on a lists folder with a catalogue, and
/// `check` explaining a blocked app (docs/services.md).
@Suite(.blocking) struct ServicesCommandTests {
    static let catalogue = """
        {"format": 1, "services": [
          {"id": "tiktok", "name": "TikTok", "kind": "social",
           "bundle_ids": {"ios": ["com.zhiliaoapp.musically"], "android": ["com.ss.android.ugc.trill"]},
           "domains": ["tiktok.com", "tiktokcdn.com"], "source": "test fixture"},
          {"id": "whatsapp", "name": "WhatsApp", "kind": "messaging",
           "bundle_ids": {"android": ["com.whatsapp"]}, "domains": ["whatsapp.net"], "source": "test fixture"}
        ]}
        """

    let scratch: ScratchDirectory

    init() throws {
        scratch = try ScratchDirectory("pg-services")
        try scratch.write("lists/adult/list.txt", "adult.example\n")
        try scratch.write("lists/services.json", Self.catalogue)
    }

    @Test func listsAndChecks() throws {
        let listed = try GateProcess.run(["services", "--lists", scratch.path("lists")])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("tiktok (TikTok, social): tiktok.com tiktokcdn.com"), "\(listed.stdout)")
        #expect(listed.stdout.contains("2 services from"))
        let json = try GateProcess.run(["services", "--json", "--lists", scratch.path("lists")])
        let lines = json.stdout.split(separator: "\n").compactMap { try? TestJSON.parse(String($0)) }
        #expect(lines.map { $0["id"]?.string } == ["tiktok", "whatsapp"])
        #expect(lines.first?["bundle_ids"]?.array?.count == 2)
        let checked = try GateProcess.run([
            "services", "check", "--lists", scratch.path("lists"), "v16m.tiktokcdn.com", "example.org",
        ])
        #expect(checked.status == 0)
        #expect(checked.stdout.contains("v16m.tiktokcdn.com: tiktok (TikTok, social) by tiktokcdn.com"))
        #expect(checked.stdout.contains("example.org: no service"))
        let invalid = try GateProcess.run(["services", "check", "--lists", scratch.path("lists"), "a..b"])
        #expect(invalid.status == 2)
    }

    @Test func aBrokenCatalogueIsNamedWithItsPath() throws {
        try scratch.write("lists/services.json", #"{"format": 1, "services": [{"id": "x", "kind": "chat"}]}"#)
        let result = try GateProcess.run(["services", "--lists", scratch.path("lists")])
        #expect(result.status == 1)
        #expect(result.stderr.contains("services.json: services[0].kind"), "\(result.stderr)")
    }

    @Test func checkExplainsABlockedApp() throws {
        let policy = try scratch.write(
            "p.json",
            #"{"version": 2, "content_filter": {"blocked_apps": ["com.zhiliaoapp.musically"]}, "social": {"dm_restriction": "none"}}"#
        )
        let result = try GateProcess.run([
            "check", "--policy", policy, "--lists", scratch.path("lists"), "--at", "2026-12-01T12:00",
            "--timezone", "UTC", "www.tiktok.com", "chat.whatsapp.net", "example.org",
        ])
        #expect(result.stdout.contains("www.tiktok.com: block service:tiktok"), "\(result.stdout)")
        #expect(result.stdout.contains("chat.whatsapp.net: block service:whatsapp"), "\(result.stdout)")
        #expect(result.stdout.contains("the app \"tiktok\" is blocked"), "\(result.stdout)")
    }

    /// `check --budget-used` asks "what if": the decision and the minutes used and left.
    @Test func checkExplainsABudgetAndAsksWhatIf() throws {
        let policy = try scratch.write(
            "budget.json",
            #"{"version": 3, "screen_time": {"per_app_limits": [{"bundle_id": "com.ss.android.ugc.trill", "daily_minutes": 60}]}}"#
        )
        let base = [
            "check", "--policy", policy, "--lists", scratch.path("lists"), "--state-dir", scratch.path("state"),
            "--at", "2026-12-01T12:00", "--timezone", "UTC",
        ]
        let fresh = try GateProcess.run(base + ["www.tiktok.com", "example.org"])
        #expect(fresh.status == 0, "\(fresh.stderr)")
        let line = "www.tiktok.com: allow default — no rule matches; budget tiktok: 0 of 60 minutes used today, 60 left"
        #expect(fresh.stdout.contains(line), "\(fresh.stdout)")
        #expect(fresh.stdout.contains("example.org: allow default — no rule matches\n"), "\(fresh.stdout)")
        let almost = try GateProcess.run(base + ["--budget-used", "TikTok=59m", "tiktok.com"])
        #expect(almost.stdout.contains("tiktok.com: allow default"), "\(almost.stdout)")
        let spent = try GateProcess.run(base + ["--budget-used", "tiktok=1h", "--json", "tiktok.com"])
        let decision = try TestJSON.parse(spent.stdout)
        #expect(decision["reason"]?.string == "limit" && decision["rule"]?.string == "tiktok", "\(spent.stdout)")
        #expect(decision["budget"]?["used"]?.int == 60 && decision["budget"]?["left"]?.int == 0)
        let text = try GateProcess.run(base + ["--budget-used", "tiktok=1h5m", "tiktok.com"])
        #expect(text.stdout.contains("tiktok.com: block limit:tiktok — the app \"tiktok\" has spent its daily minutes"))
        for (bad, message) in [
            ("tiktok", "is not SERVICE=MINUTES"), ("tiktok=5x", "is not SERVICE=MINUTES"),
            ("snapchat=5m", "no service \"snapchat\""),
        ] {
            let refused = try GateProcess.run(base + ["--budget-used", bad, "tiktok.com"])
            #expect(refused.status == 1 && refused.stderr.contains(message), "\(bad): \(refused.stderr)")
        }
    }
}
