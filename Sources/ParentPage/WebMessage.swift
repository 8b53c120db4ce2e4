import DomainMatch
import HTTP1
import Policy

/// One request to the page, read whole (head and body) by the server.
public struct WebRequest: Sendable {
    public let method: String
    /// The path, without the query, percent-decoded per segment by `segments`.
    public let path: String
    public let query: [String: String]
    public let head: RequestHead
    public let body: [UInt8]
    /// Where it came from.
    public let client: IPAddress

    public init(head: RequestHead, body: [UInt8], client: IPAddress) {
        self.head = head
        self.body = body
        self.client = client
        method = head.method
        let target = head.target
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = Form.decode(Array(target.utf8[target.utf8.index(after: mark)...]))
        } else {
            path = target
            query = [:]
        }
    }

    /// The path's segments, percent-decoded (`/api/profiles/kid/pause` → api, profiles, kid, pause).
    public var segments: [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map { Form.percentDecode(Substring($0)) }
    }

    public func header(_ name: String) -> String? { head.fields.first(name) }

    /// A cookie's value, or nil.
    public func cookie(_ name: String) -> String? {
        for line in head.fields.all("Cookie") {
            for part in line.split(separator: ";") {
                let pair = part.split(separator: "=", maxSplits: 1)
                guard pair.count == 2, pair[0].trimmingSpaces == name else { continue }
                return String(pair[1].trimmingSpaces)
            }
        }
        return nil
    }

    /// The body as a form (`application/x-www-form-urlencoded`), or empty.
    public var form: [String: String] {
        guard header("Content-Type")?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true else {
            return [:]
        }
        return Form.decode(body)
    }

    public var isJSON: Bool { header("Content-Type")?.lowercased().hasPrefix("application/json") == true }
}

/// A response the page writes. Every one carries the security headers of
/// `WebResponse.securityHeaders` (added by the server).
public struct WebResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func html(_ status: Int, _ text: String) -> WebResponse {
        WebResponse(status: status, headers: [("Content-Type", "text/html; charset=utf-8")], body: Array(text.utf8))
    }

    public static func json(_ status: Int, _ text: String) -> WebResponse {
        WebResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
    }

    public static func text(_ status: Int, _ text: String) -> WebResponse {
        WebResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Array(text.utf8))
    }

    /// 303 See Other: a form's post answered by the page to show next.
    public static func redirect(_ location: String, status: Int = 303) -> WebResponse {
        WebResponse(status: status, headers: [("Location", location)])
    }

    /// What every answer carries: no framing by another site, no script but the page's own
    /// files, no sniffing, no referrer leaving the LAN, nothing cached (a parent's child's
    /// day is not for a shared browser's cache).
    public static let securityHeaders: [(String, String)] = [
        (
            "Content-Security-Policy",
            "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; connect-src 'self'; "
                + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        ),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    ]

    static let reasons: [Int: String] = [
        200: "OK", 201: "Created", 204: "No Content", 301: "Moved Permanently", 303: "See Other",
        308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 408: "Request Timeout", 409: "Conflict", 411: "Length Required",
        413: "Content Too Large", 415: "Unsupported Media Type", 421: "Misdirected Request",
        429: "Too Many Requests", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
        503: "Service Unavailable",
    ]

    /// The bytes on the wire: status line, headers (ours, then the security headers),
    /// length, body. `keepAlive` false adds `Connection: close`.
    public func serialized(keepAlive: Bool, headOnly: Bool = false) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(Self.reasons[status] ?? "Status")\r\n"
        for (name, value) in headers + Self.securityHeaders { text += "\(name): \(value)\r\n" }
        text += "Content-Length: \(body.count)\r\n"
        if !keepAlive { text += "Connection: close\r\n" }
        text += "\r\n"
        var bytes = Array(text.utf8)
        if !headOnly { bytes += body }
        return bytes
    }
}

/// `application/x-www-form-urlencoded` and percent-encoding, both ways.
enum Form {
    /// `a=1&b=x%20y` → ["a": "1", "b": "x y"]; a repeated key keeps its first value.
    static func decode(_ bytes: [UInt8]) -> [String: String] {
        var out: [String: String] = [:]
        for pair in bytes.split(separator: UInt8(ascii: "&")) {
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            let key = percentDecode(parts[0], plusIsSpace: true)
            guard !key.isEmpty, out[key] == nil else { continue }
            out[key] = parts.count > 1 ? percentDecode(parts[1], plusIsSpace: true) : ""
        }
        return out
    }

    static func percentDecode(_ text: Substring) -> String { percentDecode(Array(text.utf8)[...], plusIsSpace: false) }

    static func percentDecode(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.endIndex, let high = hex(bytes[index + 1]),
                let low = hex(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
                continue
            }
            out.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
