import DomainMatch
import EventLoop

extension ListenAddress {
    /// The socket address of a configured server.
    public var socketAddress: SocketAddress {
        switch address {
        case .v4(let bits): SocketAddress(ipv4: bits, port: port)
        case .v6(let high, let low): SocketAddress(ipv6: high, low, port: port)
        }
    }
}

/// Which pooled stream connection serves an upstream: its address, and for DNS-over-TLS
/// the name its certificate must carry (so the same address under two names never
/// shares a connection verified for only one of them).
struct StreamKey: Hashable, Sendable {
    let address: SocketAddress
    /// nil: plain TCP.
    let serverName: String?

    /// The stream an upstream uses: `tls://` TLS; `tcp://` and UDP's truncation retry
    /// plain TCP.
    init(_ upstream: UpstreamSpec) {
        address = upstream.server.socketAddress
        serverName = upstream.transport == .tls ? upstream.serverName : nil
    }
}
