import Policy

/// The syntax of a DNS-over-HTTPS resolver address list (`blocklists/doh-addresses.txt`,
/// docs/network.md#the-doh-address-list): one IPv4 or IPv6 address or CIDR a line; `#`
/// starts a comment, blank lines are skipped. A line that is anything else is an error
/// naming the file and line, since a list that silently lost an entry would let that
/// resolver through.
public enum DoHAddressList {
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public let path: String
        public let line: Int
        public let text: String

        public var description: String { "\(path):\(line): \"\(text)\" is not an IPv4 or IPv6 address or CIDR" }
    }

    /// The entries of `text`, in file order; `path` names the file in errors.
    public static func parse(_ text: String, path: String) throws(ParseError) -> [AddressRange] {
        var entries: [AddressRange] = []
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let content = rawLine.prefix { $0 != "#" }.trimmingSpaces
            guard !content.isEmpty else { continue }
            guard let entry = AddressRange(String(content)) else {
                throw ParseError(path: path, line: index + 1, text: String(content))
            }
            entries.append(entry)
        }
        return entries
    }
}

extension Substring {
    /// Without leading and trailing spaces, tabs and carriage returns.
    fileprivate var trimmingSpaces: Substring {
        let isSpace = { (character: Character) in character == " " || character == "\t" || character == "\r" }
        var trimmed = drop(while: isSpace)
        while let last = trimmed.last, isSpace(last) { trimmed = trimmed.dropLast() }
        return trimmed
    }
}
