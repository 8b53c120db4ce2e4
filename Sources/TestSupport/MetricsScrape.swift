/// One scrape of a daemon's `/metrics` on loopback, by curl: its samples as written.
public struct MetricsScrape: Sendable {
    public let page: String

    public init(port: UInt16) throws {
        page = try Curl.run(["http://127.0.0.1:\(port)/metrics"]).body
    }

    /// The value of the sample written `sample` (its name, and its labels when it has
    /// any, as the page writes them); nil when the page has no such line.
    public subscript(_ sample: String) -> Double? {
        for line in page.split(separator: "\n") where line.hasPrefix(sample + " ") {
            return Double(line.dropFirst(sample.count + 1))
        }
        return nil
    }

    /// `sample`'s value in a scrape now; nil when the daemon cannot be reached or lacks it.
    public static func value(_ sample: String, port: UInt16) -> Double? {
        (try? MetricsScrape(port: port))?[sample]
    }
}
