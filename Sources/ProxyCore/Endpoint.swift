import DomainMatch

/// An IP address and a port: where the driver is asked to connect, and where a client
/// reached the proxy (the PAC file names it). The socket form (`SocketAddress`) is the
/// driver's; this one is enough to decide with. Printed as `192.0.2.7:80` or `[::1]:3128`.
public struct Endpoint: Hashable, Sendable, CustomStringConvertible {
    public let address: IPAddress
    public let port: UInt16

    public init(_ address: IPAddress, port: UInt16) {
        self.address = address
        self.port = port
    }

    public var description: String {
        switch address {
        case .v4: "\(address):\(port)"
        case .v6: "[\(address)]:\(port)"
        }
    }
}
