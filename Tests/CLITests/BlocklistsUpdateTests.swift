import Foundation
import TestSupport
import Testing

/// `blocklists update` against a local HTTPS server with a test CA: what a first download
/// writes, an unchanged source costing one 304, and every way a download can fail keeping
/// the previous good copy and saying why.
@Suite(.serialized, .blocking) struct BlocklistsUpdateTests {
    let dir: ScratchDirectory
    let server: TestListServer

    init() throws {
        dir = try ScratchDirectory()
        server = try TestListServer()
        try dir.write("lists/adult/curated.txt", "curated-adult.example\n")
    }

    static func names(_ count: Int, _ tag: String) -> String {
        "# a list\n" + (0..<count).map { "n\($0).\(tag).example\n" }.joined()
    }

    private func update(_ extra: [String] = [], ca: String? = nil) throws -> ProgramOutput {
        try GateProcess.run(
            [
                "blocklists", "update", "--manifest", dir.path("manifest.json"), "--lists", dir.path("lists"),
                "--state-dir", dir.path("state"), "--ca-file", ca ?? server.certificates.caFile,
            ] + extra)
    }

    private func copy(_ file: String) -> String? {
        try? String(contentsOfFile: dir.path("state/lists/\(file)"), encoding: .utf8)
    }

    @Test func firstDownloadThenNotModified() throws {
        try dir.write(
            "manifest.json",
            server.manifest([
                ("adult", "Tagged", "tagged.txt", "domains"), ("gaming", "Dated", "dated.txt", "hosts"),
                (nil, "DoH resolvers", "doh.txt", "addresses"),
            ]))
        let date = "Tue, 01 Dec 2026 10:00:00 GMT"
        server.set("tagged.txt", .list(Self.names(30, "tagged"), etag: #""v1""#))
        server.set("dated.txt", .list("0.0.0.0 a.dated.example b.dated.example\n", lastModified: date))
        server.set("doh.txt", .list("# resolvers\n198.51.100.53\n2001:db8::53/128\n", etag: #""d1""#))

        let first = try update()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.isEmpty, "\(first.stderr)")
        #expect(first.lines.contains("adult/tagged.txt: updated, 30 names (new)"))
        #expect(first.lines.contains("gaming/dated.txt: updated, 2 names (new)"))
        #expect(first.lines.contains("doh-addresses.txt: updated, 2 addresses (new)"))
        #expect(first.lines.last == "3 sources: 3 updated, 0 unchanged, 0 failed")
        #expect(copy("adult/tagged.txt") == Self.names(30, "tagged"))
        #expect(copy("doh-addresses.txt")?.contains("198.51.100.53") == true)
        // The compiled file holds the curated list and both downloads; the marker is there.
        #expect(first.stdout.contains("compiled 33 names from 3 files into \(dir.path("state"))/lists/categories.trie"))
        #expect(FileManager.default.fileExists(atPath: dir.path("state/lists/updated")))
        let validators = copy("sources.tsv") ?? ""
        #expect(validators.contains("adult/tagged.txt\t\(server.url("tagged.txt"))\t\"v1\"\t\n"))
        #expect(validators.contains("gaming/dated.txt\t\(server.url("dated.txt"))\t\t\(date)\n"))
        let marker = try FileManager.default.attributesOfItem(atPath: dir.path("state/lists/updated"))

        let second = try update()
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.lines.contains("adult/tagged.txt: unchanged, not modified since the last download"))
        #expect(second.lines.contains("gaming/dated.txt: unchanged, not modified since the last download"))
        #expect(second.lines.contains("doh-addresses.txt: unchanged, not modified since the last download"))
        #expect(second.lines.last == "3 sources: 0 updated, 3 unchanged, 0 failed")
        #expect(server.requests("tagged.txt").last?.header("If-None-Match") == #""v1""#)
        #expect(server.requests("dated.txt").last?.header("If-Modified-Since") == date)
        #expect(server.requests("tagged.txt").count == 2, "an unchanged source costs one request")
        #expect(!second.stdout.contains("compiled"), "nothing changed, nothing compiled")
        let markerAfter = try FileManager.default.attributesOfItem(atPath: dir.path("state/lists/updated"))
        #expect(marker[.systemFileNumber] as? Int == markerAfter[.systemFileNumber] as? Int)

        // The `check` command sees the downloaded copy on top of the curated list.
        let policy = try dir.write("policy.json", PolicyDocuments.json(categories: ["adult"]))
        let check = try GateProcess.run([
            "check", "--policy", policy, "--lists", dir.path("lists"), "--state-dir", dir.path("state"), "--json",
            "x.n7.tagged.example", "curated-adult.example",
        ])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.lines.count == 2 && check.lines.allSatisfy { $0.contains(#""action":"block""#) })
    }

    /// Every failure of a source, once a good copy is in place: the copy stays byte for
    /// byte, the update says why on one line per source and exits 1.
    @Test func everyFailureKeepsThePreviousGoodCopy() throws {
        let cases = ["notfound", "slow", "oversize", "garbage", "truncated", "shrunk", "doh"]
        var sources: [(category: String?, name: String, path: String, format: String)] = cases.dropLast().map {
            ("adult", $0, "\($0).txt", "domains")
        }
        sources.append((nil, "doh", "doh.txt", "addresses"))
        try dir.write("manifest.json", server.manifest(sources))
        for name in cases.dropLast() { server.set("\(name).txt", .list(Self.names(40, name))) }
        server.set("doh.txt", .list("198.51.100.53\n198.51.100.54\n"))
        let first = try update()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.lines.last == "7 sources: 7 updated, 0 unchanged, 0 failed")
        let good = Dictionary(uniqueKeysWithValues: sources.map { ($0.path, copy(Self.file($0))) })
        #expect(good.values.allSatisfy { $0 != nil })

        server.set("notfound.txt", .status(404))
        server.set("slow.txt", .hang)
        server.set("oversize.txt", .list(Self.names(400, "oversize")))
        server.set("garbage.txt", .list("<!DOCTYPE html>\n<html><body>\n<h1>Rate limited</h1>\n</body></html>\n"))
        server.set("truncated.txt", .truncated(Self.names(60, "truncated")))
        server.set("shrunk.txt", .list(Self.names(19, "shrunk")))
        server.set("doh.txt", .list("198.51.100.53\nnot-an-address\n"))
        let failed = try update(["--list-timeout", "1s", "--list-max-size", "4096"])
        #expect(failed.status == 1)
        #expect(failed.lines.last == "7 sources: 0 updated, 0 unchanged, 7 failed")
        let lines = failed.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 7, "\(failed.stderr)")
        func line(_ file: String) -> String { lines.first { $0.hasPrefix(file + ": failed: ") } ?? "" }
        let kept = "; kept the previous copy (40 names)"
        #expect(line("adult/notfound.txt").contains("failed: HTTP 404 Not Found\(kept)"))
        #expect(line("adult/slow.txt").contains("failed: timed out waiting for the response"))
        #expect(line("adult/oversize.txt").contains("failed: larger than the size limit of 4096 bytes\(" ")"))
        #expect(line("adult/garbage.txt").contains("failed: not a list: none of its 4 lines is a name"))
        #expect(line("adult/truncated.txt").contains("failed: truncated: the connection closed before the whole list"))
        #expect(
            line("adult/shrunk.txt").contains(
                "failed: shrank from 40 to 19 names (more than half gone); pass --force to take it\(kept)"))
        #expect(
            line("doh-addresses.txt").contains(
                "failed: not a list: line 2, \"not-an-address\", is not an IPv4 or IPv6 address or CIDR; "
                    + "kept the previous copy (2 addresses)"))
        #expect(lines.allSatisfy { $0.hasSuffix("]") && $0.contains("[https://127.0.0.1:") }, "each names its URL")
        for source in sources { #expect(copy(Self.file(source)) == good[source.path], "\(source.path)") }
        #expect(!failed.stdout.contains("compiled"))

        // A certificate from another CA: every source fails TLS, every copy stays.
        for name in cases.dropLast() { server.set("\(name).txt", .list(Self.names(41, name))) }
        server.set("doh.txt", .list("198.51.100.55\n"))
        let untrusted = try update(ca: server.certificates.otherCAFile)
        #expect(untrusted.status == 1)
        let tls = untrusted.stderr.split(separator: "\n")
        #expect(tls.count == 7)
        #expect(tls.allSatisfy { $0.contains("failed: TLS: certificate verify failed") }, "\(untrusted.stderr)")
        for source in sources { #expect(copy(Self.file(source)) == good[source.path], "\(source.path)") }

        // With the test CA again they all update; a list that shrank is taken with --force.
        server.set("shrunk.txt", .list(Self.names(3, "shrunk")))
        let forced = try update(["--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.lines.contains("adult/shrunk.txt: updated, 3 names (was 40)"))
        #expect(forced.lines.contains("adult/notfound.txt: updated, 41 names (was 40)"))
        #expect(forced.lines.contains("doh-addresses.txt: updated, 1 addresses (was 2)"))
        #expect(copy("adult/shrunk.txt") == Self.names(3, "shrunk"))
    }

    /// A service catalogue as a source (docs/services.md#the-catalogue): downloaded over the
    /// packaged one, read by `services` and `run`; one that does not read, or lost more than
    /// half its services, keeps the copy in place.
    @Test func aServiceCatalogueIsUpdatedAndCheckedLikeAList() throws {
        func catalogue(_ ids: [String]) -> String {
            let services = ids.map { id in
                #"{"id": "\#(id)", "name": "\#(id)", "kind": "social", "bundle_ids": {"ios": ["app.\#(id)"]}, "#
                    + #""domains": ["\#(id).example"], "source": "test"}"#
            }
            return #"{"format": 1, "services": [\#(services.joined(separator: ","))]}"#
        }
        try dir.write("lists/services.json", catalogue(["packaged"]))
        try dir.write("manifest.json", server.manifest([(nil, "Apps", "apps.json", "services")]))
        server.set("apps.json", .list(catalogue(["one", "two", "three", "four"]), etag: #""s1""#))
        let first = try update()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.lines.contains("services.json: updated, 4 services (new)"), "\(first.stdout)")
        let listed = try GateProcess.run([
            "services", "--lists", dir.path("lists"), "--state-dir", dir.path("state"),
        ])
        #expect(listed.lines.last == "4 services from \(dir.path("state"))/lists/services.json", "\(listed.stdout)")
        #expect(FileManager.default.fileExists(atPath: dir.path("state/lists/updated")), "a running gateway is told")

        server.set("apps.json", .list("<html>not json</html>", etag: #""s2""#))
        let broken = try update()
        #expect(broken.status == 1)
        #expect(
            broken.stderr.contains("services.json: failed: not a list: not a service catalogue"), "\(broken.stderr)")
        #expect(broken.stderr.contains("kept the previous copy (4 services)"), "\(broken.stderr)")
        server.set("apps.json", .list(catalogue(["one"]), etag: #""s3""#))
        let shrunk = try update()
        #expect(shrunk.stderr.contains("shrank from 4 to 1 names"), "\(shrunk.stderr)")
        #expect(copy("services.json") == catalogue(["one", "two", "three", "four"]))

        // A copy that does not read (written by hand) gives way to the packaged catalogue, named.
        try dir.write("state/lists/services.json", "{")
        let fallback = try GateProcess.run([
            "services", "--lists", dir.path("lists"), "--state-dir", dir.path("state"),
        ])
        #expect(fallback.status == 1 && fallback.stderr.contains("state/lists/services.json"), "\(fallback.stderr)")
    }

    @Test func redirectsAreFollowedToHTTPSOnly() throws {
        try dir.write(
            "manifest.json",
            server.manifest([
                ("adult", "Moved", "moved.txt", "domains"), ("adult", "Downgraded", "downgraded.txt", "domains"),
                ("adult", "Loop", "loop.txt", "domains"),
            ]))
        server.set("moved.txt", .redirect("/elsewhere/list.txt"))
        server.set("elsewhere/list.txt", .list(Self.names(5, "moved")))
        server.set("downgraded.txt", .redirect("http://127.0.0.1:9/list.txt"))
        server.set("loop.txt", .redirect(server.url("loop.txt")))
        let run = try update()
        #expect(run.status == 1)
        #expect(run.lines.contains("adult/moved.txt: updated, 5 names (new)"))
        #expect(copy("adult/moved.txt") == Self.names(5, "moved"))
        #expect(
            run.stderr.contains(
                "adult/downgraded.txt: failed: refused a redirect to http://127.0.0.1:9/list.txt: not HTTPS"))
        #expect(run.stderr.contains("adult/loop.txt: failed: more than 5 redirects; no previous copy"))
        #expect(server.requests("loop.txt").count == 6)
    }

    @Test func aBadManifestOrFlagIsAnErrorExit() throws {
        try dir.write("manifest.json", #"{"version": 1, "sources": [{"name": "x"}]}"#)
        let bad = try update()
        #expect(bad.status == 1)
        #expect(
            bad.stderr
                == "phosra-gate blocklists update: \(dir.path("manifest.json")): sources[0]: \"url\" must be an https:// URL\n"
        )
        let usage = try GateProcess.run(["blocklists", "update", "extra"])
        #expect(usage.status == 1)
        #expect(usage.stderr.hasPrefix("phosra-gate blocklists update: unexpected \"extra\""))
    }

    private static func file(_ source: (category: String?, name: String, path: String, format: String)) -> String {
        source.category.map { "\($0)/\(source.name).txt" } ?? "doh-addresses.txt"
    }
}
