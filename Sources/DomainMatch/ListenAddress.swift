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
    public static func split(_ text: String, defaultPort: UInt16?) -> (IPAddress, UInt16)? {
        var host = Substring(text)
        var portText: Substring?
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
