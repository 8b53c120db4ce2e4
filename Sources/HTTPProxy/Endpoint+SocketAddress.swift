import DomainMatch
import EventLoop
import ProxyCore

/// Between the state machine's endpoints and the sockets' addresses.
extension SocketAddress {
    /// Where to connect for `endpoint`.
    init(_ endpoint: Endpoint) {
        switch endpoint.address {
        case .v4(let bits): self.init(ipv4: bits, port: endpoint.port)
        case .v6(let high, let low): self.init(ipv6: high, low, port: endpoint.port)
        }
    }
}

extension Endpoint {
    /// The address and port of a socket's address (an IPv6 scope is dropped: a PAC file
    /// or an error message has no use for it).
    init(_ address: SocketAddress) {
        if let bits = address.ipv4Bits {
            self.init(.v4(bits), port: address.port)
        } else {
            let bits = address.ipv6Bits ?? (high: 0, low: 0)
            self.init(.v6(high: bits.high, low: bits.low), port: address.port)
        }
    }
}
