/// What a server said about the copy it last sent (RFC 9110 §8.8): its `ETag` and
/// `Last-Modified`, kept so that the next download of an unchanged list is one request
/// answered `304 Not Modified` (RFC 9110 §13.1.1, §13.1.3).
public struct SourceValidators: Equatable, Sendable {
    /// The URL the copy came from: validators of another URL mean nothing.
    public var url: String
    public var etag: String?
    public var lastModified: String?

    public init(url: String, etag: String?, lastModified: String?) {
        self.url = url
        self.etag = etag.flatMap(Self.storable)
        self.lastModified = lastModified.flatMap(Self.storable)
    }

    /// The conditional headers for a new request to `url`: none when the stored copy came
    /// from elsewhere or the server gave no validator.
    public func conditionalHeaders(for url: String) -> [(String, String)] {
        guard url == self.url else { return [] }
        var headers: [(String, String)] = []
        if let etag { headers.append(("If-None-Match", etag)) }
        if let lastModified { headers.append(("If-Modified-Since", lastModified)) }
        return headers
    }

    /// A header value kept as it came, unless it could break the state file's lines or be
    /// sent back malformed: nothing but visible ASCII and spaces, at most 1,024 bytes.
    static func storable(_ value: String) -> String? {
        let trimmed = value.trimmingSpaces
        guard !trimmed.isEmpty, trimmed.utf8.count <= 1024,
            trimmed.utf8.allSatisfy({ $0 == 0x20 || (0x21...0x7E).contains($0) })
        else { return nil }
        return trimmed
    }
}

/// The validators of every downloaded copy, by its file (`ListSource.file`), as the text
/// file `STATE_DIR/lists/sources.tsv`: one line per copy, `file TAB url TAB etag TAB
/// last-modified`, an empty field for a missing validator. A damaged line is dropped: it
/// costs one full download, never a wrong `304`.
public struct ValidatorTable: Equatable, Sendable {
    public var entries: [String: SourceValidators]

    public static let fileName = "sources.tsv"

    public init(entries: [String: SourceValidators] = [:]) { self.entries = entries }

    public init(parsing text: String) {
        var entries: [String: SourceValidators] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 4, !fields[0].isEmpty, !fields[1].isEmpty else { continue }
            entries[fields[0]] = SourceValidators(
                url: fields[1], etag: fields[2].isEmpty ? nil : fields[2],
                lastModified: fields[3].isEmpty ? nil : fields[3])
        }
        self.entries = entries
    }

    public var text: String {
        var text = "# file\turl\tETag\tLast-Modified, written by phosra-gate blocklists update\n"
        for file in entries.keys.sorted() {
            let entry = entries[file]!
            text += "\(file)\t\(entry.url)\t\(entry.etag ?? "")\t\(entry.lastModified ?? "")\n"
        }
        return text
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        let isSpace = { (character: Character) in character == " " || character == "\t" }
        var trimmed = Substring(self).drop(while: isSpace)
        while let last = trimmed.last, isSpace(last) { trimmed = trimmed.dropLast() }
        return String(trimmed)
    }
}
