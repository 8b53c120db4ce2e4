import HTTP1

/// Why a request or a response cannot be carried (docs/proxy.md#bad-input-and-limits). One error type for the
/// module (docs/ARCHITECTURE.md#house-habits (6)); each case names what was wrong and maps to the status the
/// client gets, so no caller invents its own.
public enum ProxyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The request's head or framing breaks RFC 9112, as HTTP1 names it: 431 when the
    /// head is over `ProxyLimits.headerBytes`, else 400.
    case malformed(HTTP1Error)
    /// The request target does not fit its method (RFC 9112 §3.2) (400).
    case badTarget(String)
    /// The URL or CONNECT host is not a usable name (docs/decisions.md#names) (400).
    case invalidHost(String)
    /// The request came back to this proxy (its own `Via` is in it) (508).
    case loop
    /// `Proxy-Authorization` is not usable Basic credentials (407, with the challenge).
    case credentials(CredentialsError)

    /// The status a client is answered with when its own request is at fault.
    public var status: Int {
        switch self {
        case .malformed(.headTooLarge): 431
        case .malformed(.startLineTooLong): 414
        case .malformed(.unsupportedVersion): 505
        case .loop: 508
        case .credentials: 407
        default: 400
        }
    }

    public var description: String {
        switch self {
        case .malformed(let error): error.description
        case .badTarget(let target): "bad request target \"\(target)\""
        case .invalidHost(let host): "invalid host \"\(host)\""
        case .loop: "request loops back to this proxy"
        case .credentials(let error): error.description
        }
    }
}
