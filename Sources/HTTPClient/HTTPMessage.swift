/// One request: the client adds `Host`, `User-Agent` (unless given here), `Content-Length`,
/// `Connection: keep-alive` and `Accept-Encoding: identity`, and owns the framing: any
/// `Host`, `Content-Length`, `Transfer-Encoding`, `Connection`, `Keep-Alive`, `TE`,
/// `Upgrade` or `Accept-Encoding` given here is not sent.
///
/// Header values may be secrets (the device key travels in `X-Device-Key`): printing,
/// dumping or reflecting a request shows its method, URL and header *names* only.
public struct HTTPRequest: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var method: String
    public var url: HTTPURL
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(method: String = "GET", url: HTTPURL, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// RFC 9110 §9.2.2: a request the client may send twice without changing the outcome.
    var isIdempotent: Bool { ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"].contains(method) }

    public var description: String {
        let names = headers.map(\.0)
        return "\(method) \(url)" + (names.isEmpty ? "" : " [headers: \(names.joined(separator: ", "))]")
            + (body.isEmpty ? "" : " (\(body.count) body bytes)")
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self, children: ["method": method, "url": url, "headerNames": headers.map(\.0), "bodyBytes": body.count])
    }
}

/// A complete response: the body is de-chunked and at most the client's `maxResponseBytes`.
public struct HTTPResponse: Sendable, CustomStringConvertible {
    public var status: Int
    public var reason: String
    /// As received, in order, names as the server spelled them.
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, reason: String, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }

    /// The first value of the header `name`, compared ignoring ASCII case; nil when absent.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.0.lowercased() == wanted }?.1
    }

    /// Every value of the header `name`, in order.
    public func headers(named name: String) -> [String] {
        let wanted = name.lowercased()
        return headers.filter { $0.0.lowercased() == wanted }.map(\.1)
    }

    /// The body decoded as UTF-8 (invalid sequences become U+FFFD).
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    public var description: String { "\(status) \(reason) (\(body.count) body bytes)" }
}
