import Foundation
import TestSupport
import Testing

/// `blocklists compile` / `list`, `check` using the compiled cache, and `bench matcher`.
@Suite(.serialized, .blocking) struct BlocklistsCommandTests {
    let dir: ScratchDirectory

    init() throws {
        dir = try ScratchDirectory()
        var adult = ""
        for index in 0..<2000 { adult += "x\(index).adult-example.com\n" }
        try dir.write("lists/adult/list.txt", adult + "bad..line\ncom\n")
        try dir.write("lists/gaming/list.txt", "||games.example^\n")
        try dir.write("policy.json", PolicyDocuments.json(level: "strict"))
        try FileManager.default.createDirectory(atPath: dir.path("state"), withIntermediateDirectories: true)
    }

    @Test func compileIntoTheStateDirectoryAndCheckUsesIt() throws {
        let compile = try GateProcess.run([
            "blocklists", "compile", "--lists", dir.path("lists"), "--state-dir", dir.path("state"),
        ])
        #expect(compile.status == 0, "\(compile.stderr)")
        #expect(
            compile.stdout.hasPrefix(
                "compiled 2001 names from 2 files (2 lines skipped) into \(dir.path("state"))/lists/categories.trie"))
        let check = try GateProcess.run([
            "check", "--policy", dir.path("policy.json"), "--lists", dir.path("lists"),
            "--state-dir", dir.path("state"), "--json", "a.x7.adult-example.com", "games.example",
        ])
        #expect(check.status == 0)
        #expect(check.stderr.isEmpty, "\(check.stderr)")
        #expect(check.lines.count == 2 && check.lines.allSatisfy { $0.contains(#""action":"block""#) })

        // A corrupt cache is never served: check says so and decides from the text lists.
        let cache = dir.path("state/lists/categories.trie")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: cache))
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: cache))
        let again = try GateProcess.run([
            "check", "--policy", dir.path("policy.json"), "--lists", dir.path("lists"),
            "--state-dir", dir.path("state"), "--json", "a.x7.adult-example.com",
        ])
        #expect(again.status == 0)
        #expect(again.stderr.contains("checksum mismatch"))
        #expect(again.stderr.contains("rebuilding from the text lists"))
        #expect(again.lines.first?.contains(#""category":"adult""#) == true)
    }

    @Test func compileToAFileAndList() throws {
        let out = dir.path("out/custom.trie")
        let compile = try GateProcess.run(["blocklists", "compile", "--lists", dir.path("lists"), "--out", out])
        #expect(compile.status == 0, "\(compile.stderr)")
        #expect(FileManager.default.fileExists(atPath: out))
        let both = try GateProcess.run([
            "blocklists", "compile", "--lists", dir.path("lists"), "--out", out, "--state-dir", "/x",
        ])
        #expect(both.status == 1)
        let list = try GateProcess.run(["blocklists", "list", "--lists", dir.path("lists")])
        #expect(list.status == 0)
        #expect(list.lines.contains("adult: 1 file(s), 2000 names, 0 addresses, 2 lines skipped"))
        #expect(list.lines.contains("gaming: 1 file(s), 1 names, 0 addresses, 0 lines skipped"))
        #expect(list.lines.contains("malware: no list"))
        let bad = try GateProcess.run(["blocklists", "compile", "--lists", dir.path("nope")])
        #expect(bad.status == 1)
        #expect(bad.stderr.contains(dir.path("nope")))
    }

    @Test func benchMatcherReportsEveryKey() throws {
        var queries = ""
        for index in 0..<500 { queries += "popular\(index).example.org\n" }
        try dir.write("queries.txt", queries)
        let svg = dir.path("chart.svg")
        let result = try GateProcess.run([
            "bench", "matcher", "--list", dir.path("lists/adult/list.txt"), "--queries", dir.path("queries.txt"),
            "--sizes", "1k,2500", "--mix", "popular,hostile", "--query-count", "20000", "--seconds", "0.02",
            "--threads", "2", "--json",
            "--svg", svg,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let machine = try #require(object["machine"] as? [String: Any])
        #expect(machine["lists"] as? [String] == [dir.path("lists/adult/list.txt")])
        #expect((machine["synthetic_names"] as? [String: Int])?["2500"] == 500, "2000 listed, 500 synthetic")
        let rows = try #require(object["results"] as? [[String: Any]])
        // Six strategies (trie-v3 beside the five) × two sizes × two mixes.
        #expect(rows.count == 24)
        for row in rows {
            #expect((row["lookups_per_second"] as? Double ?? 0) > 0, "\(row)")
            #expect(row["load_seconds"] != nil && row["bytes_per_name"] is Double)
        }
        for size in [1000, 2500] {
            for mix in ["popular", "hostile"] {
                let hits = Set(
                    rows.filter { $0["names"] as? Int == size && $0["mix"] as? String == mix }
                        .map { $0["hits"] as? Int ?? -1 })
                #expect(hits.count == 1, "every strategy matched as many \(mix) queries at \(size): \(hits)")
            }
        }
        let popular = rows.first { $0["strategy"] as? String == "trie" && $0["mix"] as? String == "popular" }
        // 10 % of the queries are listed names or their subdomains; none of the rest is.
        let hits = popular?["hits"] as? Int ?? 0
        #expect(abs(hits - 2_000) < 300, "\(hits)")
        #expect(!result.stderr.contains("warning"), "the strategies agree: \(result.stderr)")
        #expect(try String(contentsOfFile: svg, encoding: .utf8).hasPrefix("<svg"))
        let bad = try GateProcess.run(["bench", "matcher", "--seconds", "none"])
        #expect(bad.status == 1)
    }
}
