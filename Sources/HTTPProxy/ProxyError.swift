/// Why a request or a response cannot be carried (SPEC §5.7). One error type for the
/// module (STYLE habit 6); each case names what was wrong and maps to the status the
/// client gets, so no caller invents its own.
public enum ProxyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The header block did not end within `ProxyLimits.headerBytes` (431).
    case headerTooLarge
    /// The request line is not `METHOD SP target SP HTTP/1.x` (400).
    case malformedRequestLine
    /// A header line without a colon, with white space before it, or an obsolete line
    /// folding (RFC 9112 §5.1, §5.2) (400).
    case malformedHeader(line: Int)
    /// The request target does not fit its method (RFC 9112 §3.2) (400).
    case badTarget(String)
    /// The URL or CONNECT host is not a usable name (SPEC §1.1) (400).
    case invalidHost(String)
    /// Content-Length is not one decimal number (RFC 9112 §6.3) (400 or 502).
    case badContentLength
    /// A request Transfer-Encoding whose last coding is not chunked, or one sent together
    /// with Content-Length (request smuggling, RFC 9112 §6.1) (400).
    case badTransferEncoding
    /// A chunk-size line that is not hexadecimal or too long (400 or 502).
    case malformedChunk
    /// The origin's status line cannot be read (502).
    case malformedStatusLine
    /// The request came back to this proxy (its own `Via` is in it) (508).
    case loop

    /// The status a client is answered with when its own request is at fault.
    public var status: Int {
        switch self {
        case .headerTooLarge: 431
        case .loop: 508
        default: 400
        }
    }

    public var description: String {
        switch self {
        case .headerTooLarge: "request header block over \(ProxyLimits.headerBytes) bytes"
        case .malformedRequestLine: "malformed request line"
        case .malformedHeader(let line): "malformed header line \(line)"
        case .badTarget(let target): "bad request target \"\(target)\""
        case .invalidHost(let host): "invalid host \"\(host)\""
        case .badContentLength: "bad Content-Length"
        case .badTransferEncoding: "unsupported Transfer-Encoding"
        case .malformedChunk: "malformed chunked body"
        case .malformedStatusLine: "malformed status line from the origin"
        case .loop: "request loops back to this proxy"
        }
    }
}
