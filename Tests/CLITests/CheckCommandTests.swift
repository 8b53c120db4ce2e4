import Foundation
import TestSupport
import Testing

/// `phosra-gate check` as a user runs it: the real binary, real files.
@Suite(.serialized, .blocking) struct CheckCommandTests {
    let dir: ScratchDirectory
    let lists: String

    init() throws {
        dir = try ScratchDirectory()
        try dir.write("lists/adult/a.txt", "# adult\npornhub.com\n0.0.0.0 xvideos.com\n")
        try dir.write("lists/porn/more.txt", "||extra-adult.example^\n")
        try dir.write("lists/games/list.txt", "roblox.com\n")
        try dir.write("lists/vpn/list.txt", "nordvpn.com\n")
        try dir.write("lists/not-a-category/list.txt", "wikipedia.org\n")
        lists = dir.path("lists")
    }

    private func check(
        _ arguments: [String], policy: String = PolicyDocuments.json(level: "strict", safeSearch: true)
    ) throws
        -> ProgramOutput
    {
        let path = try dir.write("policy.json", policy)
        return try GateProcess.run(["check", "--policy", path, "--lists", lists] + arguments)
    }

    @Test func jsonHasExactlyTheContractKeysOneLinePerName() throws {
        let result = try check([
            "--json", "--at", "2026-03-31T12:00Z", "WWW.PornHub.com.", "x.roblox.com", "www.google.de",
            "nordvpn.com", "example.org", "mask.icloud.com", "extra-adult.example",
        ])
        #expect(result.status == 0)
        let objects = try result.lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
        #expect(objects.count == 7)
        for object in objects {
            #expect(Set(object.keys) == ["name", "action", "reason", "rule", "category", "target"])
        }
        #expect(
            result.lines[0]
                == #"{"name":"www.pornhub.com","action":"block","reason":"category","rule":"pornhub.com","category":"adult","target":null}"#
        )
        #expect(
            result.lines[1]
                == #"{"name":"x.roblox.com","action":"block","reason":"category","rule":"roblox.com","category":"gaming","target":null}"#
        )
        #expect(
            result.lines[2]
                == #"{"name":"www.google.de","action":"rewrite","reason":"safe_search","rule":null,"category":null,"target":"forcesafesearch.google.com"}"#
        )
        #expect(
            result.lines[3]
                == #"{"name":"nordvpn.com","action":"block","reason":"circumvention","rule":"nordvpn.com","category":"proxy","target":null}"#
        )
        #expect(
            result.lines[4]
                == #"{"name":"example.org","action":"allow","reason":"default","rule":null,"category":null,"target":null}"#
        )
        #expect(
            result.lines[5]
                == #"{"name":"mask.icloud.com","action":"block","reason":"circumvention","rule":"mask.icloud.com","category":null,"target":null}"#
        )
        #expect(result.lines[6].contains(#""rule":"extra-adult.example","category":"adult""#))
        #expect(result.stderr.contains("not-a-category: not a category id or synonym; ignored"))
    }

    @Test func invalidNamesExitTwoAndSayWhy() throws {
        let result = try check([
            "--json", "ok.example", "bad..name", "a b.example", String(repeating: "x", count: 64) + ".com",
        ])
        #expect(result.status == 2)
        #expect(result.lines.count == 4)
        #expect(result.lines[0].contains(#""action":"allow""#))
        #expect(
            result.lines[1]
                == #"{"name":"bad..name","action":"invalid","reason":"empty label","rule":null,"category":null,"target":null}"#
        )
        #expect(result.lines[2].contains(#""action":"invalid""#) && result.lines[2].contains("not allowed"))
        #expect(result.lines[3].contains("label is 64 octets long"))
        let human = try check(["ok.example", ""])
        #expect(human.status == 2)
        #expect(human.lines == ["ok.example: allow default — no rule matches", ": invalid — empty name"])
    }

    @Test func humanOutputIsOneLinePerName() throws {
        let policy = PolicyDocuments.json(
            level: "moderate", blocked: ["reddit.com"], allowed: ["khanacademy.org"],
            screenTime: #""downtime_windows": [{"days_of_week": ["tue"], "start_time": "21:00", "end_time": "07:00"}]"#)
        let day = try check(
            ["--at", "2026-03-31T12:00Z", "--timezone", "UTC", "old.reddit.com", "www.khanacademy.org"], policy: policy)
        #expect(day.status == 0)
        #expect(
            day.lines == [
                #"old.reddit.com: block blocked_domain:reddit.com — on the parent's blocked_domains as "reddit.com""#,
                #"www.khanacademy.org: allow allowed_domain — on the parent's allowed_domains as "khanacademy.org""#,
            ])
        let night = try check(["--at", "2026-03-31T22:00", "--timezone", "UTC", "khanacademy.org"], policy: policy)
        #expect(
            night.lines == [
                "khanacademy.org: block downtime — inside a downtime window (21:00–07:00 Tue) until Wed 2026-04-01 07:00"
            ])
    }

    @Test func decisionKeysAsFlagsAndConfig() throws {
        let policy = PolicyDocuments.json(
            level: "strict",
            screenTime: #""downtime_windows": [{"days_of_week": [], "start_time": "", "end_time": ""}]"#)
        let flags = try check(
            [
                "--json", "--always-allow", "school.example,10.9.8.7", "--downtime-allow=homework.example",
                "--block-bypass", "false", "--api", "https://api.example.net:8443/v1",
                "www.school.example", "homework.example", "x.homework.example", "api.example.net",
                "phosra-api.fly.dev", "10.9.8.7",
            ], policy: policy)
        #expect(flags.status == 0)
        let actions = flags.lines.map { line in
            let object = try! JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return "\(object["action"]!) \(object["reason"]!)"
        }
        #expect(
            actions == [
                "allow system", "allow default", "allow default", "allow system", "block downtime", "allow system",
            ])

        let config = try dir.write("gate.conf", "always_allow = school.example\nblock_bypass = no\n")
        let fromFile = try check(
            ["--config", config, "--json", "www.school.example", "dns.google"],
            policy: PolicyDocuments.json(level: "light"))
        #expect(
            fromFile.lines.map { $0.contains(#""reason":"system""#) || $0.contains(#""reason":"default""#) } == [
                true, true,
            ])
        let flagWins = try check(
            ["--config", config, "--block-bypass", "--json", "dns.google"], policy: PolicyDocuments.json(level: "light")
        )
        #expect(flagWins.lines.first?.contains(#""reason":"circumvention""#) == true)
    }

    @Test func explicitInstantsAndOffsets() throws {
        let policy = PolicyDocuments.json(
            screenTime: #""downtime_windows": [{"days_of_week": ["mon"], "start_time": "20:00", "end_time": "21:00"}]"#)
        // 2026-03-30 is a Monday.
        for (at, expected) in [
            ("2026-03-30T20:30Z", "downtime"), ("2026-03-30T20:30:59.999Z", "downtime"),
            ("2026-03-30T22:30+02:00", "downtime"), ("2026-03-30T21:30+0100", "downtime"),
            ("2026-03-30T21:00Z", "default"), ("2026-03-30T19:59:59Z", "default"),
            ("2026-03-30T15:30-05:00", "downtime"),
        ] {
            let result = try check(["--json", "--timezone", "UTC", "--at", at, "example.org"], policy: policy)
            #expect(result.status == 0, "\(at): \(result.stderr)")
            #expect(result.stdout.contains(#""reason":"\#(expected)""#), "\(at)")
        }
    }

    @Test func badInputIsOneLineAndExitOne() throws {
        let cases: [([String], String, String)] = [
            (["--json", "--at", "yesterday", "a.example"], "", "--at: \"yesterday\" is not an ISO 8601 time"),
            (["--at", "2026-02-30T10:00", "a.example"], "", "--at: \"2026-02-30T10:00\" is not a valid date and time"),
            (["--timezone", "Mars/Olympus", "a.example"], "", "--timezone"),
            (["--frobnicate", "a.example"], "", "--frobnicate: unknown flag"),
            (["--rate-limit", "lots", "a.example"], "", "--rate-limit: \"lots\" is not a whole number ≥ 0"),
            (["--block-bypass", "maybe", "a.example"], "", "--block-bypass: \"maybe\" is not true or false"),
            (["--block-mode", "explode", "a.example"], "", "--block-mode: \"explode\" is not nxdomain, null, refused"),
            (["a.example", "--always-allow"], "", "--always-allow: needs a value"),
            (["--json"], "", "no NAME given"),
            (["--lists", "/nonexistent/lists", "a.example"], "", "/nonexistent/lists"),
            (
                ["--config", "/nonexistent/gate.conf", "a.example"], "",
                "/nonexistent/gate.conf: No such file or directory"
            ),
            (
                ["--json", "a.example"], "{\"web_filter\": {\"blocked_domains\": [\"a\", 7]}}",
                "web_filter.blocked_domains[1]: expected a string"
            ),
            (["a.example"], "{not json", "not valid JSON"),
        ]
        for (arguments, policy, message) in cases {
            let result = try check(arguments, policy: policy.isEmpty ? PolicyDocuments.json() : policy)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stdout.isEmpty, "\(arguments)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.first.map { $0.contains(message) } == true, "\(arguments): \(result.stderr)")
            if message != "no NAME given" { #expect(lines.count == 1, "\(arguments): \(result.stderr)") }
        }
        let badConfig = try dir.write("bad.conf", "# comment\nblock_bypass = perhaps\n")
        let result = try check(["--config", badConfig, "a.example"])
        #expect(result.status == 1)
        #expect(result.stderr == "phosra-gate check: \(badConfig):2: block_bypass: \"perhaps\" is not true or false\n")
        let missing = try GateProcess.run(["check", "--lists", lists, "a.example"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("--policy"))
        let unreadable = try GateProcess.run([
            "check", "--policy", "/nonexistent/policy.json", "--lists", lists, "a.example",
        ])
        #expect(unreadable.stderr == "phosra-gate check: /nonexistent/policy.json: No such file or directory\n")
    }

    @Test func defaultListsAreTheProjectsOwn() throws {
        let path = try dir.write("p.json", PolicyDocuments.json(level: "strict"))
        let result = try GateProcess.run(
            ["check", "--policy", path, "--json", "pornhub.com", "bet365.com"], cwd: dir.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.lines.count == 2)
        #expect(result.lines[0].contains(#""category":"adult""#))
        #expect(result.lines[1].contains(#""category":"gambling""#))
    }

    @Test func theExamplePolicyShipsAndDecides() throws {
        let example = GateProcess.checkout.appendingPathComponent("examples/policy.json").path
        let result = try GateProcess.run([
            "check", "--policy", example, "--timezone", "UTC", "--at", "2026-12-01T16:00", "--json",
            "www.reddit.com", "khanacademy.org", "www.google.com", "fortnite.com",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.lines.map { line in
                ["blocked_domain", "allowed_domain", "safe_search", "category"].first {
                    line.contains("\"reason\":\"\($0)\"")
                } ?? line
            } == ["blocked_domain", "allowed_domain", "safe_search", "category"])
    }
}

extension CheckCommandTests {
    @Test func wallClockTimesInANamedZone() throws {
        let policy = PolicyDocuments.json(
            screenTime: #""downtime_windows": [{"days_of_week": ["sun"], "start_time": "01:30", "end_time": "03:30"}]"#)
        let skipped = try check(
            ["--timezone", "Europe/Berlin", "--at", "2026-03-29T02:30", "a.example"], policy: policy)
        #expect(skipped.status == 1)
        #expect(
            skipped.stderr
                == "phosra-gate check: --at: \"2026-03-29T02:30\" does not exist in Europe/Berlin (the clocks skip it)\n"
        )
        let after = try check(
            ["--json", "--timezone", "Europe/Berlin", "--at", "2026-03-29T03:15", "a.example"], policy: policy)
        #expect(after.stdout.contains(#""reason":"downtime""#))
        let utc = try check(
            ["--json", "--timezone", "Europe/Berlin", "--at", "2026-03-29T01:45Z", "a.example"], policy: policy)
        #expect(utc.stdout.contains(#""reason":"default""#), "03:45 CEST")
        let config = try dir.write("zone.conf", "timezone = America/New_York\n")
        let fromConfig = try check(
            ["--config", config, "--json", "--at", "2026-11-01T01:45", "a.example"],
            policy: PolicyDocuments.json(
                screenTime: #""downtime_windows": [{"start_time": "01:30", "end_time": "02:00"}]"#))
        #expect(fromConfig.stdout.contains(#""reason":"downtime""#), "\(fromConfig.stderr)")
        let badZone = try dir.write("badzone.conf", "\ntimezone = Atlantis/Capital\n")
        let result = try check(["--config", badZone, "a.example"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("phosra-gate check: \(badZone):2: timezone: "))
    }
}
