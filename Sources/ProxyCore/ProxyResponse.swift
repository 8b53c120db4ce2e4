import Bytes
import HTTP1

/// The responses the proxy makes itself: `200 Connection established`, refusals and
/// errors with a one-line body, the block page and the PAC file. Written straight into
/// the connection's output buffer. Pure.
public enum ProxyResponse {
    /// After the upstream connection is open (RFC 9110 §9.3.6): no body, no length.
    public static let established = Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8)
    /// A fatal TLS alert, `access_denied` (RFC 8446 §6: record type 21, level 2,
    /// description 49), in a TLS 1.2-versioned record as every TLS version reads it.
    public static let accessDeniedAlert: [UInt8] = [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x31]

    /// A refusal: `403 Forbidden`, `Content-Type: text/plain`, `X-Phosra-Block: <reason>`
    /// and a one-line body (docs/proxy.md#connect).
    /// With `childPage`, a second line says where the child asks a parent for it.
    public static func blocked(
        _ block: BlockReason, host: String, keepAlive: Bool, childPage: String? = nil, to out: inout ByteBuffer
    ) {
        var body = "blocked by phosra-gate: \(sanitized(host)) (\(sanitized(block.text)))\n"
        if let ask = childPage.flatMap({ block.askURL(base: $0, site: host) }) { body += "ask a parent: \(ask)\n" }
        write(
            status: 403, headers: [("X-Phosra-Block", sanitized(block.text))], body: body, keepAlive: keepAlive,
            to: &out)
    }

    /// The block page for a plain-HTTP request (docs/proxy.md#plain-http), with the same header.
    public static func blockPage(_ page: BlockPage, keepAlive: Bool, headOnly: Bool, to out: inout ByteBuffer) {
        write(
            status: 403, contentType: "text/html; charset=utf-8",
            headers: [("X-Phosra-Block", sanitized(page.block.text)), ("Cache-Control", "no-store")],
            body: page.html, keepAlive: keepAlive, headOnly: headOnly, to: &out)
    }

    /// 400 for a URL whose host is not a valid name, as a page a browser shows.
    public static func invalidHost(
        _ host: String, url: String, gatewayName: String, keepAlive: Bool, to out: inout ByteBuffer
    ) {
        write(
            status: 400, contentType: "text/html; charset=utf-8",
            body: BlockPage.invalidHost(host, url: url, gatewayName: gatewayName), keepAlive: keepAlive, to: &out)
    }

    /// `407`: credentials are missing, wrong or malformed (RFC 9110 §15.5.8), with the
    /// challenge `Proxy-Authenticate: Basic realm="phosra-gate"` (§11.7.1) that makes a
    /// browser ask for a user and password (docs/proxy.md#proxy-authentication). A browser
    /// answers it by sending the same request again with `Proxy-Authorization`, on the same
    /// connection when it stays open: pass the request's own keep-alive, and false when a
    /// request body will not be read (its bytes would be taken for the next request).
    public static func authenticationRequired(keepAlive: Bool, to out: inout ByteBuffer) {
        write(status: 407, body: "phosra-gate: proxy authentication required\n", keepAlive: keepAlive, to: &out)
    }

    /// `429` after too many failed logins from one address (`AuthFailureLimiter`):
    /// `Retry-After` in whole seconds, rounded up (RFC 6585 §4, RFC 9110 §10.2.3), and the
    /// connection closed, so that guessing costs a new connection each time.
    public static func tooManyAuthenticationFailures(retryAfter nanoseconds: UInt64, to out: inout ByteBuffer) {
        let seconds = max(1, nanoseconds / 1_000_000_000 + (nanoseconds % 1_000_000_000 == 0 ? 0 : 1))
        write(
            status: 429, headers: [("Retry-After", "\(seconds)")],
            body: "phosra-gate: too many failed proxy logins; try again in \(seconds) s\n", keepAlive: false, to: &out)
    }

    /// An error of the proxy's own (400, 404, 407, 414, 429, 431, 502, 504, 505, 508) with a one-line body.
    public static func error(_ status: Int, _ message: String, keepAlive: Bool = false, to out: inout ByteBuffer) {
        write(status: status, body: "phosra-gate: \(sanitized(message))\n", keepAlive: keepAlive, to: &out)
    }

    /// The answer to an OPTIONS or TRACE whose Max-Forwards is 0 (RFC 9110 §7.6.2): this
    /// proxy is the final recipient. OPTIONS: what it serves, in `Allow`. TRACE: the request
    /// as received (`message/http`, §9.3.8), without the fields likely to hold secrets
    /// (credentials and cookies) and the hop-by-hop ones.
    public static func finalRecipient(_ head: RequestHead, keepAlive: Bool, to out: inout ByteBuffer) {
        guard head.method == "TRACE" else {
            write(
                status: 200, headers: [("Allow", "GET, HEAD, POST, PUT, DELETE, OPTIONS, TRACE, CONNECT")], body: "",
                keepAlive: keepAlive, to: &out)
            return
        }
        var echo = ByteBuffer(capacity: head.fields.bytes.count)
        echo.writeString("TRACE \(sanitized(head.target)) HTTP/1.\(head.minorVersion)\r\n")
        ForwardedHead.write(head.fields, to: &echo) {
            head.fields.isNamed($0, "authorization") || head.fields.isNamed($0, "cookie")
        }
        echo.writeString("\r\n")
        let body = echo.readString(length: echo.readableBytes) ?? ""
        write(status: 200, contentType: "message/http", body: body, keepAlive: keepAlive, to: &out)
    }

    /// The PAC file for a proxy reached at `address` (docs/proxy.md#the-pac-file).
    public static func pac(for address: Endpoint, keepAlive: Bool, headOnly: Bool, to out: inout ByteBuffer) {
        write(
            status: 200, contentType: PAC.contentType, headers: [("Cache-Control", "max-age=300")],
            body: PAC.script(for: address), keepAlive: keepAlive, headOnly: headOnly, to: &out)
    }

    /// The challenge of every 407: Basic is what browsers and command-line clients offer
    /// for a proxy without extra setup.
    public static let authenticationChallenge = #"Basic realm="phosra-gate""#

    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 407: "Proxy Authentication Required"
        case 429: "Too Many Requests"
        case 414: "URI Too Long"
        case 431: "Request Header Fields Too Large"
        case 502: "Bad Gateway"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        case 508: "Loop Detected"
        default: "Error"
        }
    }

    static func write(
        status: Int, contentType: String = "text/plain; charset=utf-8", headers: [(String, String)] = [],
        body: String, keepAlive: Bool, headOnly: Bool = false, to out: inout ByteBuffer
    ) {
        var head = "HTTP/1.1 \(status) \(reasonPhrase(status))\r\nContent-Type: \(contentType)\r\n"
        // A 407 without its challenge leaves the client nothing to answer (RFC 9110 §15.5.8:
        // MUST), so every 407 gets it, also one made by `error`.
        if status == 407 { head += "Proxy-Authenticate: \(authenticationChallenge)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.utf8.count)\r\n"
        head += keepAlive ? "\r\n" : "Connection: close\r\n\r\n"
        out.writeString(head)
        if !headOnly { out.writeString(body) }
    }

    /// Printable ASCII only: a header value or a body line can never be split by what a
    /// client put in its request.
    static func sanitized(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }))
    }
}
