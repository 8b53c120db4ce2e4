import DomainMatch

/// Where a request wants to go, read from its request target (RFC 9112 §3.2): the
/// authority-form of CONNECT (`host:port`) or the absolute-form of a proxy request
/// (`http://host[:port]/path`). The host is normalised once here (docs/decisions.md#names,
/// docs/ARCHITECTURE.md#house-habits (5)): a validated lowercase name, or an IP literal.
public struct ProxyTarget: Equatable, Sendable {
    public enum Host: Equatable, Sendable, CustomStringConvertible {
        case name(DomainName)
        case address(IPAddress)

        public var description: String {
            switch self {
            case .name(let name): name.description
            case .address(let address): address.description
            }
        }
    }

    public let host: Host
    public let port: UInt16
    /// For the origin: the path and query (`/` at least), no fragment. Empty for CONNECT.
    public let path: String
    /// `host[:port]` as the client wrote it: the `Host` sent to the origin.
    public let authority: String

    /// `host:port` (CONNECT, RFC 9110 §9.3.6): the port is required; IPv6 in brackets.
    public static func connect(_ target: String) throws(ProxyError) -> ProxyTarget {
        guard let (host, port) = try split(authority: Substring(target), defaultPort: nil) else {
            throw .badTarget(target)
        }
        return ProxyTarget(host: host, port: port, path: "", authority: target)
    }

    /// `http://authority[/path][?query]`: no user info, port 80 unless given.
    public static func absolute(_ target: String) throws(ProxyError) -> ProxyTarget {
        // Read in the UTF-8 view, as `split` is: every delimiter here is ASCII, and a
        // byte index after one is also a character boundary of the text.
        let bytes = target.utf8
        guard bytes.count > 7, bytes.prefix(7).elementsEqual("http://".utf8, by: { $0.asciiLowercased == $1 }) else {
            throw .badTarget(target)
        }
        let rest = bytes.dropFirst(7)
        let authorityEnd =
            rest.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
            ?? rest.endIndex
        let authority = target[rest.startIndex..<authorityEnd]
        guard !authority.utf8.contains(UInt8(ascii: "@")),
            let (host, port) = try split(authority: authority, defaultPort: 80)
        else {
            throw .badTarget(target)
        }
        let pathEnd = bytes[authorityEnd...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        var path = String(target[authorityEnd..<pathEnd])
        if path.utf8.first != UInt8(ascii: "/") { path = "/" + path }
        return ProxyTarget(host: host, port: port, path: path, authority: String(authority))
    }

    /// `host[:port]` → host and port; nil when the form is wrong (no port where one is
    /// required, a port that is not 1–65535).
    /// - Throws: `.invalidHost` when the host is neither an IP literal nor a valid name.
    private static func split(authority: Substring, defaultPort: UInt16?) throws(ProxyError) -> (Host, UInt16)? {
        // Found in the UTF-8 view, byte by byte: the String view would look for grapheme
        // boundaries in a text that is ASCII whenever it is valid.
        let bytes = authority.utf8
        var hostText = authority
        var portText: Substring?
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            hostText = authority[bytes.index(after: bytes.startIndex)..<close]
            let after = authority[bytes.index(after: close)...]
            if !after.isEmpty {
                guard after.utf8.first == UInt8(ascii: ":") else { return nil }
                portText = after[after.utf8.index(after: after.utf8.startIndex)...]
            }
            guard let address = IPAddress(hostText), case .v6 = address else { throw .invalidHost("[\(hostText)]") }
            guard let port = port(portText, defaultPort) else { return nil }
            return (.address(address), port)
        }
        if let colon = bytes.lastIndex(of: UInt8(ascii: ":")) {
            hostText = authority[..<colon]
            portText = authority[bytes.index(after: colon)...]
        }
        guard let port = port(portText, defaultPort), !hostText.isEmpty else { return nil }
        if let address = IPAddress(hostText), case .v4 = address { return (.address(address), port) }
        guard !hostText.utf8.contains(UInt8(ascii: ":")), let name = try? QueryName.parse(String(hostText)) else {
            throw .invalidHost(String(hostText))
        }
        return (.name(name), port)
    }

    private static func port(_ text: Substring?, _ defaultPort: UInt16?) -> UInt16? {
        guard let text else { return defaultPort }
        guard !text.isEmpty, text.utf8.count <= 5, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        let value = text.utf8.reduce(0) { $0 * 10 + Int($1 &- 48) }
        guard value >= 1, value <= 65535 else { return nil }
        return UInt16(value)
    }
}
