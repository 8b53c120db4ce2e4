import DomainMatch

/// An upstream resolver (docs/dns.md#forwarding): `IP[:port]` (UDP, retried over TCP when truncated),
/// `tcp://IP[:port]`, or `tls://IP[:853]#servername` (DNS-over-TLS).
public struct UpstreamSpec: Hashable, Sendable, CustomStringConvertible {
    public enum Transport: String, Sendable { case udp, tcp, tls }

    public let transport: Transport
    public let server: ListenAddress
    /// The name the TLS certificate must carry (`tls://` only).
    public let serverName: String?

    public init(transport: Transport, server: ListenAddress, serverName: String? = nil) {
        self.transport = transport
        self.server = server
        self.serverName = serverName
    }

    public init?(_ text: String) {
        var rest = Substring(text)
        var transport = Transport.udp
        if rest.hasPrefix("tcp://") {
            transport = .tcp
            rest = rest.dropFirst(6)
        } else if rest.hasPrefix("tls://") {
            transport = .tls
            rest = rest.dropFirst(6)
        } else if rest.hasPrefix("udp://") {
            rest = rest.dropFirst(6)
        }
        var serverName: String?
        if let hash = rest.firstIndex(of: "#") {
            let name = String(rest[rest.index(after: hash)...])
            guard transport == .tls, (try? QueryName.parse(name)) != nil else { return nil }
            serverName = name
            rest = rest[..<hash]
        }
        guard transport != .tls || serverName != nil else { return nil }
        guard let (address, port) = ListenAddress.split(String(rest), defaultPort: transport == .tls ? 853 : 53) else {
            return nil
        }
        self.init(transport: transport, server: ListenAddress(address: address, port: port), serverName: serverName)
    }

    public var description: String {
        switch transport {
        case .udp: return server.description
        case .tcp: return "tcp://\(server)"
        case .tls: return "tls://\(server)#\(serverName ?? "")"
        }
    }
}
