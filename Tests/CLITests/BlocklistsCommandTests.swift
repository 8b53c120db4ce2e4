import Foundation
import TestSupport
import Testing

/// `blocklists compile` / `list`, `check` using the compiled cache, and `bench matcher`.
@Suite(.serialized) struct BlocklistsCommandTests {
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
        let result = try GateProcess.run([
            "bench", "matcher", "--list", dir.path("lists/adult/list.txt"),
            "--queries", dir.path("queries.txt"), "--seconds", "0.05", "--threads", "2", "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "names", "build_seconds", "load_seconds", "bytes_per_name", "build_peak_bytes",
                "structure_bytes", "lookups_per_second", "lookups_per_second_threads",
                "naive_lookups_per_second", "speedup_vs_naive", "hits",
            ])
        #expect(object["names"] as? Int == 2000)
        // 10 % of 500,000 queries are listed names or their subdomains; none of the rest is.
        #expect(object["hits"] as? Int == 50_000 || (object["hits"] as? Int).map { abs($0 - 50_000) < 1500 } == true)
        #expect((object["lookups_per_second"] as? Double ?? 0) > 0)
        #expect(result.stderr.isEmpty, "the trie and the naive set agree: \(result.stderr)")
        let bad = try GateProcess.run(["bench", "matcher", "--seconds", "none"])
        #expect(bad.status == 1)
    }
}
