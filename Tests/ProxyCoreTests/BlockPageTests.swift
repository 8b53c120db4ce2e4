import Bytes
import Policy
import Testing
import Zoneinfo

@testable import ProxyCore

@Suite struct BlockPageTests {
    private let now = LocalDateTime(year: 2026, month: 12, day: 1, hour: 22, minute: 5)

    @Test func escapesEverythingFromTheRequest() {
        #expect(
            BlockPage.escape(#"<script>alert("x&y")</script>'"#)
                == "&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;&#39;")
        let page = BlockPage(
            site: "<b>evil</b>.example", url: "http://x/<img src=x onerror=alert(1)>",
            block: BlockReason(text: "blocked_domain:<i>x</i>"), now: now, zoneName: "UTC",
            gatewayName: "home<gw>"
        ).html
        #expect(!page.contains("<b>evil"))
        #expect(!page.contains("<img"))
        #expect(!page.contains("<i>x"))
        #expect(!page.contains("home<gw>"))
        #expect(page.contains("&lt;b&gt;evil&lt;/b&gt;.example"))
        #expect(page.contains("http://x/&lt;img src=x onerror=alert(1)&gt;"))
        #expect(page.contains("home&lt;gw&gt;"))
    }

    @Test func saysWhatWhyWhenAndWhere() {
        let decision = Decision(.block, .category, rule: "adult.example", category: .adult)
        let page = BlockPage(
            site: "adult.example", url: "http://adult.example/", block: BlockReason(decision), now: now,
            zoneName: "CET", gatewayName: "living-room"
        ).html
        #expect(page.contains("<title>Blocked: adult.example</title>"))
        #expect(page.contains("This site is in a category that is blocked: adult content."))
        #expect(page.contains("<code>category:adult</code>"))
        #expect(page.contains("<tr><th>Category</th><td>adult content</td></tr>"))
        #expect(page.contains("Tue 2026-12-01 22:05 (CET)"))
        #expect(page.contains("living-room"))
        #expect(!page.contains("Allowed again"), "no cutoff end for a list block")
    }

    @Test func aCutoffSaysWhenItEnds() {
        let end = LocalDateTime(year: 2026, month: 12, day: 2, hour: 6, minute: 30)
        let page = BlockPage(
            site: "khanacademy.org", url: "http://khanacademy.org/", block: BlockReason(text: "downtime"),
            now: now, cutoffEnd: .some(end), zoneName: "UTC", gatewayName: "gw"
        ).html
        #expect(page.contains("It is downtime"))
        #expect(page.contains("<tr><th>Allowed again</th><td>Wed 2026-12-02 06:30</td></tr>"))
        let forever = BlockPage(
            site: "x.org", url: "http://x.org/", block: BlockReason(text: "schedule"), now: now,
            cutoffEnd: .some(nil), zoneName: "UTC", gatewayName: "gw"
        ).html
        #expect(forever.contains("not within the coming week"))
    }

    @Test func reasonTextsReadBack() {
        let category = BlockReason(text: "category:adult")
        #expect(category.reason == .category)
        #expect(category.category == .adult)
        #expect(category.decision.reasonText == "category:adult")
        let domain = BlockReason(text: "blocked_domain:reddit.com")
        #expect(domain.reason == .blockedDomain)
        #expect(domain.decision.reasonText == "blocked_domain:reddit.com")
        #expect(BlockReason(text: "sni:x.example").decision.reasonText == "sni:x.example")
        #expect(BlockReason(text: "downtime").isCutoff)
    }

    /// The link to the child's page (docs/requests-and-notifications.md#asking): what a
    /// parent can lift is asked for, filled in and escaped; what no parent can lift has none.
    @Test func aBlockLinksToTheQuestionAParentCanAnswer() {
        let base = "http://gate.home.arpa"
        #expect(
            BlockReason(text: "blocked_domain:reddit.com").askURL(base: base, site: "www.reddit.com")
                == base + "/ask?kind=site&name=www.reddit.com")
        #expect(
            BlockReason(text: "category:adult").askURL(base: base, site: "a b&c") == base
                + "/ask?kind=site&name=a%20b%26c")
        for text in ["paused", "downtime", "schedule", "daily_limit"] {
            #expect(BlockReason(text: text).askURL(base: base, site: "x.example") == base + "/ask?kind=time", "\(text)")
        }
        #expect(
            BlockReason(text: "limit:tiktok").askURL(base: base, site: "tiktok.com") == base
                + "/ask?kind=app&app=tiktok")
        for text in ["ip_literal", "port", "tls_unreadable", "local_destination"] {
            #expect(BlockReason(text: text).askURL(base: base, site: "x") == nil, "\(text)")
        }
        let page = BlockPage(
            site: "<b>x</b>.example", url: "http://x/", block: BlockReason(text: "blocked_domain:x.example"), now: now,
            zoneName: "UTC", gatewayName: "gw",
            askURL: BlockReason(text: "blocked_domain:x.example").askURL(base: base, site: "<b>x</b>.example")
        ).html
        #expect(
            page.contains(
                "<a href=\"http://gate.home.arpa/ask?kind=site&amp;name=%3Cb%3Ex%3C%2Fb%3E.example\">Ask a parent</a>"))
        var plain = ByteBuffer(capacity: 0)
        ProxyResponse.blocked(
            BlockReason(text: "category:adult"), host: "adult.example", keepAlive: false, childPage: base, to: &plain)
        let text = plain.withUnsafeReadableBytes { String(decoding: $0, as: UTF8.self) }
        #expect(text.hasSuffix("ask a parent: http://gate.home.arpa/ask?kind=site&name=adult.example\n"), "\(text)")
    }
}
