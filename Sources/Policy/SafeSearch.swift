import DomainMatch

/// The safe-search table of docs/decisions.md#safe-search: exactly these names, and no others.
public enum SafeSearch {
    /// The rewrite target for `name`, or nil when the name is not in the table.
    /// `strictYouTube` picks `restrict.youtube.com` (level strict) over the moderate host.
    /// The targets are parsed once, here: a decision carries the name itself.
    public static func target(for name: DomainName, strictYouTube: Bool) -> DomainName? {
        // Over the name's bytes, with index loops: asked for every allowed name of a
        // safe-search profile, so it makes no string and no array
        // (docs/performance.md#allocations-per-query).
        let bytes = name.bytes
        for index in exact.indices where equal(bytes, 0..<bytes.count, exact[index].name) {
            return exact[index].target ?? (strictYouTube ? restrictYouTube : moderateYouTube)
        }
        let start = equal(bytes, 0..<min(4, bytes.count), www) ? 4 : 0
        guard let dot = firstDot(bytes, from: start) else { return nil }
        let brand = start..<dot
        let zone = dot + 1..<bytes.count
        if equal(bytes, brand, google), isGoogleZone(bytes, zone) { return forceGoogle }
        if equal(bytes, brand, yandex) {
            for index in yandexZones.indices where equal(bytes, zone, yandexZones[index]) {
                return familyYandex
            }
        }
        return nil
    }

    private static func equal(_ bytes: [UInt8], _ range: Range<Int>, _ other: [UInt8]) -> Bool {
        guard range.count == other.count else { return false }
        for index in 0..<other.count where bytes[range.lowerBound + index] != other[index] { return false }
        return true
    }

    private static func firstDot(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: ".") { return index }
            index += 1
        }
        return nil
    }

    /// `com`, a two-letter country code, or `com.`/`co.` followed by one.
    private static func isGoogleZone(_ bytes: [UInt8], _ zone: Range<Int>) -> Bool {
        func isCountryCode(_ range: Range<Int>) -> Bool {
            range.count == 2 && bytes[range.lowerBound] &- UInt8(ascii: "a") < 26
                && bytes[range.lowerBound + 1] &- UInt8(ascii: "a") < 26
        }
        guard let dot = firstDot(bytes, from: zone.lowerBound) else {
            return equal(bytes, zone, com) || isCountryCode(zone)
        }
        let first = zone.lowerBound..<dot
        let second = dot + 1..<zone.upperBound
        guard firstDot(bytes, from: second.lowerBound) == nil else { return false }
        return (equal(bytes, first, com) || equal(bytes, first, co)) && isCountryCode(second)
    }

    private static let www = Array("www.".utf8)
    private static let google = Array("google".utf8)
    private static let yandex = Array("yandex".utf8)
    private static let com = Array("com".utf8)
    private static let co = Array("co".utf8)

    /// The names of the table and their targets; nil for YouTube's, which depends on the level.
    private static let exact: [(name: [UInt8], target: DomainName?)] = exactNames.map {
        (Array($0.key.utf8), $0.value == youTube ? nil : parsed($0.value))
    }

    private static let youTube = "youtube"
    private static let restrictYouTube = parsed("restrict.youtube.com")
    private static let moderateYouTube = parsed("restrictmoderate.youtube.com")
    private static let forceGoogle = parsed("forcesafesearch.google.com")
    private static let familyYandex = parsed("familysearch.yandex.ru")

    /// A target of the table, which is a valid name.
    private static func parsed(_ text: String) -> DomainName {
        guard let name = try? QueryName.parse(text) else { preconditionFailure("\(text) is not a name") }
        return name
    }

    private static let exactNames: [String: String] = {
        var table: [String: String] = [:]
        for name in [
            "www.youtube.com", "m.youtube.com", "youtube.com", "youtubei.googleapis.com",
            "youtube.googleapis.com", "www.youtube-nocookie.com",
        ] { table[name] = youTube }
        // Google's other hosts of the same search engine, with its unfiltered results.
        for name in ["ipv4.google.com", "ipv6.google.com", "images.google.com", "encrypted.google.com"] {
            table[name] = "forcesafesearch.google.com"
        }
        for name in ["www.bing.com", "bing.com", "edgeservices.bing.com"] { table[name] = "strict.bing.com" }
        // html. and lite. are DuckDuckGo's pages without JavaScript, served by the same engine.
        for name in [
            "duckduckgo.com", "www.duckduckgo.com", "start.duckduckgo.com", "html.duckduckgo.com",
            "lite.duckduckgo.com",
        ] {
            table[name] = "safe.duckduckgo.com"
        }
        for name in ["pixabay.com", "www.pixabay.com"] { table[name] = "safesearch.pixabay.com" }
        table["www.ecosia.org"] = "strict-safe-search.ecosia.org"
        table["search.brave.com"] = "safesearch.brave.com"
        return table
    }()

    private static let yandexZones = ["ru", "com", "by", "kz", "uz", "com.tr"].map { Array($0.utf8) }
}
