import DomainMatch
import Policy

/// `ADDR:PORT` or `[V6]:PORT`: a listen address (`dns_listen`, `proxy_listen`, …).
public struct ListenAddress: Hashable, Sendable, CustomStringConvertible {
    public let address: IPAddress
    public let port: UInt16

    public init(address: IPAddress, port: UInt16) {
        self.address = address
        self.port = port
    }

    public init?(_ text: String) {
        guard let (address, port) = ListenAddress.split(text, defaultPort: nil) else { return nil }
        self.init(address: address, port: port)
    }

    /// `ADDR[:PORT]` / `[V6][:PORT]` → address and port (the default when absent).
    static func split(_ text: String, defaultPort: UInt16?) -> (IPAddress, UInt16)? {
        var host = Substring(text), portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { return nil }
                portText = rest.dropFirst()
            }
        } else if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard let address = IPAddress(host) else { return nil }
        if let portText {
            guard let port = UInt16(portText), port > 0 else { return nil }
            return (address, port)
        }
        guard let defaultPort else { return nil }
        return (address, defaultPort)
    }

    public var description: String {
        if case .v6 = address { return "[\(address)]:\(port)" }
        return "\(address):\(port)"
    }
}

/// An upstream resolver (SPEC §4.6): `IP[:port]` (UDP, retried over TCP when truncated),
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
        guard let (address, port) = ListenAddress.split(String(rest), defaultPort: transport == .tls ? 853 : 53) else { return nil }
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

/// `ZONE=IP[:port]`: where `local_forward` sends a private zone (SPEC §4.3).
public struct LocalForward: Hashable, Sendable {
    public let zone: DomainName
    public let server: UpstreamSpec

    public init?(_ text: String) {
        let parts = text.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, let zone = try? QueryName.parse(String(parts[0])),
              let server = UpstreamSpec(String(parts[1])) else { return nil }
        self.zone = zone
        self.server = server
    }
}
