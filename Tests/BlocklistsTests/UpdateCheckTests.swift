import Testing

@testable import Blocklists

/// The pure parts of `blocklists update`: validators, the shrink guard, the list check.
@Suite struct UpdateCheckTests {
    @Test func validatorsMakeConditionalHeadersForTheirOwnURLOnly() {
        let stored = SourceValidators(
            url: "https://e.org/a", etag: #"W/"abc""#, lastModified: "Tue, 01 Dec 2026 10:00:00 GMT")
        #expect(
            stored.conditionalHeaders(for: "https://e.org/a").map { "\($0.0): \($0.1)" } == [
                #"If-None-Match: W/"abc""#, "If-Modified-Since: Tue, 01 Dec 2026 10:00:00 GMT",
            ])
        #expect(stored.conditionalHeaders(for: "https://e.org/b").isEmpty, "a moved source is fetched whole")
        let etagOnly = SourceValidators(url: "https://e.org/a", etag: "\"x\"", lastModified: nil)
        #expect(etagOnly.conditionalHeaders(for: "https://e.org/a").map(\.0) == ["If-None-Match"])
        let unsafe = SourceValidators(url: "https://e.org/a", etag: "\"a\tb\"", lastModified: "x\ny")
        #expect(unsafe.etag == nil && unsafe.lastModified == nil)
        #expect(unsafe.conditionalHeaders(for: "https://e.org/a").isEmpty)
    }

    @Test func validatorTableRoundTripsAndDropsDamagedLines() {
        var table = ValidatorTable()
        table.entries["adult/a.txt"] = SourceValidators(url: "https://e.org/a", etag: "\"1\"", lastModified: nil)
        table.entries["doh-addresses.txt"] = SourceValidators(
            url: "https://e.org/d", etag: nil, lastModified: "Tue, 01 Dec 2026 10:00:00 GMT")
        #expect(ValidatorTable(parsing: table.text) == table)
        let damaged = ValidatorTable(parsing: table.text + "half a line\n\tno-file\tx\ty\n" + "a\tb\tc\n")
        #expect(damaged == table)
        #expect(ValidatorTable(parsing: "") == ValidatorTable())
    }

    @Test func shrinkGuardTakesHalfAndRefusesLess() {
        #expect(ShrinkGuard.allows(names: 50, previous: 100))
        #expect(!ShrinkGuard.allows(names: 49, previous: 100))
        #expect(ShrinkGuard.allows(names: 2, previous: 3))
        #expect(!ShrinkGuard.allows(names: 1, previous: 3))
        #expect(ShrinkGuard.allows(names: 1, previous: 0))
        #expect(ShrinkGuard.allows(names: 500, previous: 10))
        #expect(DownloadCheck.replaces(names: 10, previous: nil, force: false) == .success(10))
        #expect(
            DownloadCheck.replaces(names: 10, previous: 100, force: false)
                == .failure(.shrank(names: 10, previous: 100)))
        #expect(DownloadCheck.replaces(names: 10, previous: 100, force: true) == .success(10))
        #expect(
            ListRefusal.shrank(names: 10, previous: 100).description
                == "shrank from 100 to 10 names (more than half gone); pass --force to take it")
    }

    @Test func aListReadsAndGarbageDoesNot() throws {
        func check(_ text: String) -> Result<Int, ListRefusal> {
            DownloadCheck.categoryList(Array(text.utf8)).map(\.names)
        }
        #expect(check("# a list\na.example\nb.example\n") == .success(2))
        #expect(check("0.0.0.0 a.example\n127.0.0.1 localhost\n0.0.0.0 b.example\n") == .success(2))
        #expect(check("||a.example^\n||b.example^$third-party\n/ads/*\n##.banner\n") == .success(1))
        #expect(check("") == .failure(.notAList("no names in it")))
        #expect(check("# only comments\n! and more\n") == .failure(.notAList("no names in it")))
        let html = "<!DOCTYPE html>\n<html><head><title>Oops</title></head>\n<body>Not here</body></html>\n"
        guard case .failure(.notAList(let why)) = check(html) else {
            Issue.record("an HTML page read as a list")
            return
        }
        #expect(why.hasPrefix("none of its 3 lines is a name (e.g. <!DOCTYPE html>"))
        guard case .failure(.notAList(let mostly)) = check("a.example\n<p>\n<div>\n") else {
            Issue.record("a page with one name-like line read as a list")
            return
        }
        #expect(mostly.hasPrefix("2 of its 3 lines are not names"))
        #expect(
            DownloadCheck.categoryList([0x61, 0x2E, 0x63, 0x6F, 0x6D, 0x0A, 0x00, 0x01]).map(\.names)
                == .failure(.notAList("it holds binary data (a NUL byte)")))
    }
}
