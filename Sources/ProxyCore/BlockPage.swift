import Zoneinfo

/// The HTML page a plain-HTTP request to a blocked site gets with its 403 (docs/proxy.md#plain-http):
/// the site, the reason in plain words, the category, the time, when the cutoff ends and
/// the gateway's name. Everything that came from the request is HTML-escaped. Pure.
public struct BlockPage: Sendable {
    /// The host as the client wrote it.
    public var site: String
    /// The whole URL asked for.
    public var url: String
    public var block: BlockReason
    /// The wall clock now, and when the cutoff ends (nil: not within the coming week);
    /// `cutoffEnd` is only shown for downtime and schedule blocks.
    public var now: LocalDateTime
    public var cutoffEnd: LocalDateTime??
    public var zoneName: String
    public var gatewayName: String
    /// Where the child asks a parent for it (`BlockReason.askURL`); nil: no link.
    public var askURL: String?

    public init(
        site: String, url: String, block: BlockReason, now: LocalDateTime, cutoffEnd: LocalDateTime?? = nil,
        zoneName: String, gatewayName: String, askURL: String? = nil
    ) {
        self.askURL = askURL
        self.site = site
        self.url = url
        self.block = block
        self.now = now
        self.cutoffEnd = cutoffEnd
        self.zoneName = zoneName
        self.gatewayName = gatewayName
    }

    public var html: String {
        var rows = [
            ("Site", Self.escape(site)),
            ("Reason", "<code>\(Self.escape(block.text))</code>"),
            ("Category", Self.escape(BlockReason.categoryName(block.category))),
            ("Time", "\(Self.format(now)) (\(Self.escape(zoneName)))"),
        ]
        if block.isCutoff, let end = cutoffEnd {
            rows.append(("Allowed again", end.map(Self.format) ?? "not within the coming week"))
        }
        rows.append(("Address", Self.escape(url)))
        return Self.document(
            title: "Blocked: \(site)", heading: "This site is blocked", site: site, text: block.plainWords,
            rows: rows, gatewayName: gatewayName, ask: askURL)
    }

    /// The page for a URL whose host is not a name at all (docs/decisions.md#names; answered 400): there
    /// is nothing to decide, so nothing is fetched.
    public static func invalidHost(_ host: String, url: String, gatewayName: String) -> String {
        document(
            title: "Not a valid address", heading: "This address is not valid", site: host,
            text: "Only letters, digits, \"-\" and \"_\" may appear in a site's name.",
            rows: [("Address", escape(url))], gatewayName: gatewayName)
    }

    /// The page around `rows` (already escaped); every other argument is escaped here.
    static func document(
        title: String, heading: String, site: String, text: String, rows: [(String, String)],
        gatewayName: String, ask: String? = nil
    ) -> String {
        let link = ask.map { "<p class=\"ask\"><a href=\"\(escape($0))\">Ask a parent</a></p>\n" } ?? ""
        let table = rows.map { "<tr><th>\($0.0)</th><td>\($0.1)</td></tr>" }.joined(separator: "\n")
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(title))</title>
            <style>
            body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1d2433;margin:0}
            main{max-width:36rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 2px 12px #0002}
            h1{margin-top:0;font-size:1.6rem}.site{font-size:1.2rem;font-weight:600;word-break:break-all}
            th{text-align:left;padding:.3rem 1rem .3rem 0;color:#5b6474;font-weight:500;vertical-align:top}
            td{word-break:break-all}footer{margin-top:2rem;color:#5b6474;font-size:.9rem}
            </style></head>
            <body><main>
            <h1>\(escape(heading))</h1>
            <p class="site">\(escape(site))</p>
            <p class="reason">\(escape(text))</p>
            <table>
            \(table)
            </table>
            \(link)<footer>Blocked by phosra-gate on \(escape(gatewayName)).</footer>
            </main></body></html>

            """
    }

    /// `&`, `<`, `>`, `"` and `'` as character references: safe in text and in attributes.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// `Tue 2026-12-01 22:00`.
    static func format(_ local: LocalDateTime) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let day = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][local.weekday.rawValue - 1]
        return "\(day) \(local.year)-\(two(local.month))-\(two(local.day)) \(two(local.hour)):\(two(local.minute))"
    }
}
