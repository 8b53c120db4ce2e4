import SystemIO
import TLS

/// Why a request got no response. One error type for the module (docs/ARCHITECTURE.md#house-habits (6)). No case
/// ever carries a request header value, so a device key cannot reach a log through it.
public enum HTTPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Which step ran out of time.
    public enum Phase: String, Sendable {
        case connect = "connecting"
        case tlsHandshake = "in the TLS handshake"
        case send = "sending the request"
        case response = "waiting for the response"
    }

    /// The URL text and what is wrong with it.
    case invalidURL(String)
    /// A request the client will not send: a bad method, a header name that is not a
    /// token, a value with a line break (named by header, never by value), https without TLS.
    case invalidRequest(String)
    /// The host name did not resolve: getaddrinfo's reason.
    case resolve(host: String, reason: String)
    /// The TCP connect failed (errno and the address), e.g. ECONNREFUSED. With several
    /// addresses for a name, the last one's failure.
    case connect(SystemError)
    /// TLS failed: `certificate verify failed: unable to get local issuer certificate`,
    /// `certificate verify failed: hostname mismatch`, `wrong version number`, …
    case tls(TLSError)
    /// The connection failed while sending or receiving (ECONNRESET, EPIPE, …).
    case io(SystemError)
    /// The deadline passed in this phase.
    case timeout(Phase)
    /// The server's bytes are not an HTTP/1.1 response: what was wrong.
    case malformedResponse(String)
    /// The body is (or announced to be) larger than the client's limit.
    case responseTooLarge(limit: Int)
    /// The server closed the connection before the response was complete.
    case closed

    public var description: String {
        switch self {
        case .invalidURL(let text): "invalid URL \(text)"
        case .invalidRequest(let text): "invalid request: \(text)"
        case .resolve(let host, let reason): "cannot resolve \(host): \(reason)"
        case .connect(let error): error.description
        case .tls(let error): "TLS: \(error)"
        case .io(let error): error.description
        case .timeout(let phase): "timed out \(phase.rawValue)"
        case .malformedResponse(let text): "malformed response: \(text)"
        case .responseTooLarge(let limit): "response larger than \(limit) bytes"
        case .closed: "connection closed before a complete response"
        }
    }
}
