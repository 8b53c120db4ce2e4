import Glibc

/// An absolute `http` or `https` URL, validated once (docs/ARCHITECTURE.md#house-habits (5)): scheme, a lowercase
/// host name or an IP literal (IPv6 written in brackets), a port, and a percent-encoded
/// path and query. A base URL may carry a path prefix (`https://host/api/v1`) that
/// `appending(path:)` extends. User info is refused (a password has no business in a
/// configured URL), and a fragment is dropped (it is never sent).
public struct HTTPURL: Sendable, Equatable, Hashable, CustomStringConvertible {
    public enum Scheme: String, Sendable {
        case http
        case https

        public var defaultPort: UInt16 { self == .http ? 80 : 443 }
    }

    public let scheme: Scheme
    /// A lowercase name, or an IP literal (IPv6 without its brackets).
    public let host: String
    public let port: UInt16
    /// Percent-encoded: empty, or starting with "/".
    public private(set) var path: String
    /// Percent-encoded, without the "?"; nil when there is none.
    public private(set) var query: String?
    /// True when the host is an IPv4 or IPv6 literal (no name to resolve, no SNI).
    public let isIPLiteral: Bool

    /// Parses `http(s)://host[:port][/path][?query][#fragment]`.
    /// - Throws: `.invalidURL` naming the text and what is wrong with it.
    public init(_ text: String) throws(HTTPError) {
        func invalid(_ why: String) -> HTTPError { .invalidURL("\"\(text)\": \(why)") }
        guard let separator = text.firstRange(of: "://") else { throw invalid("expected http:// or https://") }
        guard let scheme = Scheme(rawValue: text[..<separator.lowerBound].lowercased()) else {
            throw invalid("the scheme must be http or https")
        }
        var rest = text[separator.upperBound...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var tail = rest[authorityEnd...]
        guard !authority.contains("@") else { throw invalid("user info is not supported") }

        let hostText: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("unclosed [ in the host") }
            hostText = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw invalid("unexpected text after ]") }
                portText = after.dropFirst()
            }
            var address = in6_addr()
            guard inet_pton(AF_INET6, String(hostText), &address) == 1 else {
                throw invalid("not an IPv6 address in [ ]")
            }
        } else {
            if let colon = authority.lastIndex(of: ":") {
                hostText = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            } else {
                hostText = authority
            }
            guard !hostText.isEmpty else { throw invalid("no host") }
            guard hostText.utf8.allSatisfy(Self.isHostByte) else {
                throw invalid("the host may hold only letters, digits, \"-\", \".\" and \"_\" (IPv6 goes in [ ])")
            }
        }
        var port = scheme.defaultPort
        if let portText, !portText.isEmpty {
            guard portText.count <= 5, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let value = Int(portText), (1...65535).contains(value)
            else { throw invalid("the port must be 1...65535") }
            port = UInt16(value)
        }
        var query: Substring?
        if let mark = tail.firstIndex(of: "?") {
            query = tail[tail.index(after: mark)...]
            tail = tail[..<mark]
        }
        guard URLEncoding.isValid(tail, allowing: URLEncoding.pathBytes) else {
            throw invalid("the path holds a character that must be percent-encoded")
        }
        if let query, !URLEncoding.isValid(query, allowing: URLEncoding.queryBytes) {
            throw invalid("the query holds a character that must be percent-encoded")
        }
        var ipv4 = in_addr()
        self.scheme = scheme
        self.host = hostText.lowercased()
        self.port = port
        self.path = String(tail)
        self.query = query.map(String.init)
        self.isIPLiteral = authority.hasPrefix("[") || inet_pton(AF_INET, String(hostText), &ipv4) == 1
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    /// This URL with `path` added below its own path, one "/" between them. `path` is
    /// literal text: characters a path cannot hold (including "%") are percent-encoded;
    /// "/" separates segments. `https://h/api/v1` + `device/policy` (or `/device/policy`)
    /// is `https://h/api/v1/device/policy`. The query is kept.
    public func appending(path extra: String) -> HTTPURL {
        let encoded = URLEncoding.encode(extra, keeping: URLEncoding.pathBytes)
        guard !encoded.isEmpty else { return self }
        var copy = self
        let base = path.hasSuffix("/") ? String(path.dropLast()) : path
        copy.path = encoded.hasPrefix("/") ? base + encoded : base + "/" + encoded
        return copy
    }

    /// This URL with `name=value` pairs added to its query, each percent-encoded except
    /// for the unreserved characters (so "+", "&" and "=" in a value arrive intact).
    public func appending(queryItems items: [(name: String, value: String)]) -> HTTPURL {
        guard !items.isEmpty else { return self }
        let pairs = items.map {
            URLEncoding.encode($0.name, keeping: URLEncoding.unreservedBytes) + "="
                + URLEncoding.encode($0.value, keeping: URLEncoding.unreservedBytes)
        }
        var copy = self
        let existing = query.map { $0.isEmpty ? [] : [$0] } ?? []
        copy.query = (existing + pairs).joined(separator: "&")
        return copy
    }

    /// One query item: `url.appending(query: "since_version", "42")`.
    public func appending(query name: String, _ value: String) -> HTTPURL {
        appending(queryItems: [(name: name, value: value)])
    }

    /// What goes on the request line: the path ("/" when empty) and the query.
    public var requestTarget: String {
        let base = path.isEmpty ? "/" : path
        return query.map { "\(base)?\($0)" } ?? base
    }

    /// The `Host` header: the host (IPv6 in brackets), and the port unless it is the default.
    public var authority: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return port == scheme.defaultPort ? bracketed : "\(bracketed):\(port)"
    }

    public var description: String { "\(scheme.rawValue)://\(authority)\(requestTarget)" }
}
