import DNSWire
import DomainMatch
import SystemIO
import TLS

/// Why one upstream attempt failed (docs/dns.md#forwarding). Each failure moves the question on to the
/// next upstream; none of them reaches the caller, who sees only the answer or nil.
public enum UpstreamError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No acceptable reply within the upstream's timeout (or the total budget).
    case timedOut
    /// A socket call failed: connect refused, an ICMP port unreachable, a reset.
    case network(SystemError)
    /// DNS-over-TLS failed: the certificate did not verify, the handshake broke, …
    case tls(TLSError)
    /// The upstream answered SERVFAIL or REFUSED, which fail over like no answer.
    case rcode(DNSRcode)
    /// The TCP or TLS connection ended before the answer came.
    case connectionClosed
    /// The client was shut down, or a `tls://` upstream was used without a TLS context.
    case unavailable(String)

    public var description: String {
        switch self {
        case .timedOut: "timed out"
        case .network(let error): error.description
        case .tls(let error): error.description
        case .rcode(let rcode): "answered \(rcode)"
        case .connectionClosed: "connection closed before the answer"
        case .unavailable(let reason): reason
        }
    }
}

/// What the client tells its log hook: an upstream's first failure after it last
/// answered (one line per failure burst, not one per query), and its recovery.
public enum UpstreamEvent: Equatable, Sendable, CustomStringConvertible {
    case failed(UpstreamSpec, UpstreamError)
    /// It answered again; `failures` attempts had failed since it last did.
    case recovered(UpstreamSpec, failures: Int)

    public var description: String {
        switch self {
        case .failed(let upstream, let error): "upstream \(upstream) failed: \(error)"
        case .recovered(let upstream, let failures): "upstream \(upstream) answers again after \(failures) failures"
        }
    }
}
