import DomainMatch
import Store
import Testing
import Zoneinfo

@testable import ParentPage

/// The page's pure parts: escaping, forms, times, the login limiter, where a form returns.
@Suite struct ParentPageUnitTests {
    @Test func htmlEscapingLeavesNothingActiveOrHidden() {
        #expect(
            Escape.html(#"<script>"a"&'b'</script>"#) == "&lt;script&gt;&quot;a&quot;&amp;&#39;b&#39;&lt;/script&gt;")
        // Bidi overrides and controls become visible; ordinary Unicode stays.
        #expect(Escape.html("abc\u{202E}txt.exe") == "abc\\u{202e}txt.exe")
        #expect(Escape.html("a\u{1B}[8mb\r\nc") == "a\\u{1b}[8mb\\u{d}\\u{a}c")
        #expect(Escape.html("Mia’s iPad ✓") == "Mia’s iPad ✓")
    }

    @Test func jsonEscapingIsValidAndInert() {
        #expect(Escape.json(#"a"b\c"#) == #""a\"b\\c""#)
        #expect(Escape.json("<b>&'") == #""\u003cb\u003e\u0026\u0027""#)
        #expect(Escape.json("x\u{2028}y\u{202E}z\u{0}") == #""x\u2028y\u202ez\u0000""#)
        #expect(Escape.json("\n\t") == #""\n\t""#)
    }

    @Test func formsAndPercentEncodingDecode() {
        let form = Form.decode(Array("name=a%20b+c&minutes=15&name=second&empty=&bad=%zz%4".utf8))
        #expect(form == ["name": "a b c", "minutes": "15", "empty": "", "bad": "%zz%4"])
        #expect(Escape.url("mia & leo/é") == "mia%20%26%20leo%2F%C3%A9")
        #expect(Form.percentDecode("mia%20%26%20leo%2F%C3%A9") == "mia & leo/é")
    }

    @Test func rfc3339TimesAreReadExactlyAndAnythingElseRefused() {
        #expect(Times.parseRFC3339("2026-12-06T18:30:00Z") == 1_796_581_800)
        #expect(Times.parseRFC3339("2026-12-06T19:30:00+01:00") == 1_796_581_800)
        #expect(Times.parseRFC3339("2026-12-06T18:30:00.123Z") == 1_796_581_800)
        for bad in [
            "2026-12-06 18:30", "2026-13-06T18:30:00Z", "2026-12-06T18:30:00", "tomorrow", "2026-12-06T18:30:00+0100",
        ] {
            #expect(Times.parseRFC3339(bad) == nil, "\(bad)")
        }
        #expect(Timestamp.rfc3339(1_796_581_800) == "2026-12-06T18:30:00Z")
        #expect(Times.nextMidnight(after: 1_796_581_800, zone: .utc) == 1_796_601_600)
        #expect(Times.next(hour: 6, after: 1_796_581_800, zone: .utc) == 1_796_601_600 + 6 * 3_600)
    }

    @Test func fiveFailuresLockOneClientForFifteenMinutesThenTwiceAsLong() {
        var limiter = LoginLimiter()
        for _ in 0..<4 { #expect(limiter.failed("a", now: 1_000) == nil) }
        #expect(limiter.failed("a", now: 1_000) == 900)
        #expect(limiter.retryAfter("a", now: 1_100) == 800)
        #expect(limiter.retryAfter("b", now: 1_100) == nil, "another client is not locked")
        for _ in 0..<4 { _ = limiter.failed("a", now: 2_000) }
        #expect(limiter.failed("a", now: 2_000) == 1_800)
        limiter.succeeded("a")
        #expect(limiter.retryAfter("a", now: 2_001) == nil)
        // Bounded: the oldest client is forgotten first.
        var small = LoginLimiter(capacity: 2)
        _ = small.failed("x", now: 1)
        _ = small.failed("y", now: 2)
        _ = small.failed("z", now: 3)
        for _ in 0..<4 { _ = small.failed("x", now: 4) }
        #expect(small.retryAfter("x", now: 5) == nil, "x was forgotten, so four more failures do not lock it")
    }

    @Test func aFormReturnsOnlyToThePagesOwnPaths() {
        #expect(WebApp.back("/profiles/mia") == "/profiles/mia")
        for bad in [nil, "https://evil.example/", "//evil.example", "/\\evil", "/a b", "javascript:alert(1)"] {
            #expect(WebApp.back(bad) == "/", "\(bad ?? "nil")")
        }
    }
}

/// The child's day as an SVG chart: a slot per local hour, bars scaled to the busiest.
@Suite struct DayChartTests {
    @Test func aSlotPerHourOfTheLocalDayScaledToTheBusiestHour() throws {
        let zone = try ZoneRules.load(named: "Europe/Berlin")
        // 2026-03-29, the day Berlin's clocks skip 02:00: 23 hours.
        let midnight: Int64 = 1_774_738_800
        let next = midnight + 23 * 3_600
        let svg = DayChart.svg(
            hours: [
                DayHour(hourStart: midnight + 3_600, queries: 100, blocks: 25),
                DayHour(hourStart: midnight + 9 * 3_600, queries: 50, blocks: 0),
            ], midnight: midnight, nextMidnight: next, zone: zone)
        #expect(svg.components(separatedBy: "<title>").count - 1 == 23)
        #expect(svg.contains("<title>01:00 — 100 queries, 25 blocked</title>"))
        // 01:00 is followed by 03:00: the skipped hour has no slot.
        #expect(svg.contains("<title>03:00 — 0 queries, 0 blocked</title>"))
        #expect(!svg.contains("<title>02:00"))
        // The busiest hour fills the plot (160 units); a quarter of it is blocked.
        #expect(svg.contains("class=\"q\" x=\"36.0\" y=\"0.0\" width=\"21.9\" height=\"160.0\""), "\(svg)")
        #expect(svg.contains("class=\"b\" x=\"36.0\" y=\"120.0\" width=\"21.9\" height=\"40.0\""))
        #expect(!svg.contains("style="), "no inline style: the CSP forbids it")
    }
}
