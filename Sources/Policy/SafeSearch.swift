import DomainMatch

/// The safe-search table of docs/decisions.md#safe-search: exactly these names, and no others.
public enum SafeSearch {
    /// The rewrite target for `name`, or nil when the name is not in the table.
    /// `strictYouTube` picks `restrict.youtube.com` (level strict) over the moderate host.
    public static func target(for name: DomainName, strictYouTube: Bool) -> String? {
        let text = name.description
        if let exact = exactNames[text] {
            return exact == youTube ? (strictYouTube ? "restrict.youtube.com" : "restrictmoderate.youtube.com") : exact
        }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        let host = labels.first == "www" ? labels.dropFirst() : labels[...]
        guard host.count >= 2 else { return nil }
        let brand = host[host.startIndex]
        let zone = host.dropFirst()
        switch brand {
        case "google" where isGoogleZone(zone): return "forcesafesearch.google.com"
        case "yandex" where yandexZones.contains(zone.joined(separator: ".")): return "familysearch.yandex.ru"
        default: return nil
        }
    }

    private static let youTube = "youtube"

    private static let exactNames: [String: String] = {
        var table: [String: String] = [:]
        for name in [
            "www.youtube.com", "m.youtube.com", "youtube.com", "youtubei.googleapis.com",
            "youtube.googleapis.com", "www.youtube-nocookie.com",
        ] { table[name] = youTube }
        for name in ["www.bing.com", "bing.com", "edgeservices.bing.com"] { table[name] = "strict.bing.com" }
        for name in ["duckduckgo.com", "www.duckduckgo.com", "start.duckduckgo.com"] {
            table[name] = "safe.duckduckgo.com"
        }
        for name in ["pixabay.com", "www.pixabay.com"] { table[name] = "safesearch.pixabay.com" }
        table["www.ecosia.org"] = "strict-safe-search.ecosia.org"
        table["search.brave.com"] = "safesearch.brave.com"
        return table
    }()

    private static let yandexZones: Set<String> = ["ru", "com", "by", "kz", "uz", "com.tr"]

    /// `com`, a two-letter country code, or `com.`/`co.` followed by one.
    private static func isGoogleZone(_ zone: ArraySlice<Substring>) -> Bool {
        func isCountryCode(_ label: Substring) -> Bool {
            label.utf8.count == 2 && label.utf8.allSatisfy { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") }
        }
        switch zone.count {
        case 1: return zone.first == "com" || isCountryCode(zone.first!)
        case 2: return (zone.first == "com" || zone.first == "co") && isCountryCode(zone.last!)
        default: return false
        }
    }
}
