import Glibc

extension SocketAddress {
    /// Why a text is not an address with a port. Each case carries the text as given.
    public enum ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        /// No `:port` at the end (`"1.2.3.4"`, `"[::1]"`).
        case missingPort(String)
        /// The port is not 0...65535 in plain decimal digits.
        case invalidPort(String)
        /// The host is not a numeric IPv4 or IPv6 address (names are not resolved here).
        case invalidHost(String)
        /// An IPv6 address with a port must be written `[addr]:port`.
        case unbracketedIPv6(String)
        /// A `%scope` that is neither a number nor an interface of this machine.
        case unknownScope(String)

        private static func format(_ family: Int32, _ bits: UnsafeRawPointer) -> String {
            withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN) + 1) { text in
                guard inet_ntop(family, bits, text.baseAddress, socklen_t(text.count)) != nil else { return "?" }
                return String(cString: text.baseAddress!)
            }
        }

        public var description: String {
            switch self {
            case .missingPort(let text): "\"\(text)\": missing :port"
            case .invalidPort(let text): "\"\(text)\": port must be 0...65535"
            case .invalidHost(let text): "\"\(text)\": not a numeric IPv4 or IPv6 address"
            case .unbracketedIPv6(let text): "\"\(text)\": write IPv6 addresses as [address]:port"
            case .unknownScope(let text): "\"\(text)\": unknown interface in %scope"
            }
        }
    }

    /// Parses `"127.0.0.1:5300"`, `"0.0.0.0:53"`, `"[::1]:53"` or `"[fe80::1%eth0]:53"`.
    /// Numeric only: host names are rejected, never looked up.
    public init(_ text: String) throws(ParseError) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .invalidHost(text) }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.first == ":" else { throw rest.isEmpty ? .missingPort(text) : .invalidHost(text) }
            portText = rest.dropFirst()
            guard host.contains(":") else { throw .invalidHost(text) }
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw .missingPort(text) }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            guard !host.contains(":") else { throw .unbracketedIPv6(text) }
        }
        guard let port = Self.parsePort(portText) else { throw .invalidPort(text) }
        self = try Self.numeric(String(host), port: port, original: text)
    }

    /// An address from a numeric host without brackets (`"::1"`, `"10.0.0.1"`) and a port.
    public init(host: String, port: UInt16) throws(ParseError) {
        self = try Self.numeric(host, port: port, original: host)
    }

    private static func numeric(_ host: String, port: UInt16, original: String) throws(ParseError) -> SocketAddress {
        if !host.contains(":") {
            var address = sockaddr_in()
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw .invalidHost(original) }
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            return SocketAddress(address)
        }
        var address = sockaddr_in6()
        var bare = host
        if let percent = host.firstIndex(of: "%") {
            bare = String(host[..<percent])
            let scope = String(host[host.index(after: percent)...])
            if let number = UInt32(scope) {
                address.sin6_scope_id = number
            } else {
                let index = if_nametoindex(scope)
                guard index != 0 else { throw .unknownScope(original) }
                address.sin6_scope_id = index
            }
        }
        guard inet_pton(AF_INET6, bare, &address.sin6_addr) == 1 else { throw .invalidHost(original) }
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        return SocketAddress(address)
    }

    /// Plain decimal digits only: `UInt16("+53")` would accept a sign.
    private static func parsePort(_ text: Substring) -> UInt16? {
        guard !text.isEmpty, text.count <= 5, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        guard let value = Int(text), value <= 65535 else { return nil }
        return UInt16(value)
    }
}

extension SocketAddress: CustomStringConvertible {
    /// The host without port or brackets: `"127.0.0.1"`, `"::1"`, `"fe80::1%2"`.
    public var host: String {
        switch storage {
        case .v4(var address):
            return Self.format(AF_INET, &address.sin_addr)
        case .v6(var address):
            let bare = Self.format(AF_INET6, &address.sin6_addr)
            return address.sin6_scope_id == 0 ? bare : "\(bare)%\(address.sin6_scope_id)"
        }
    }

    private static func format(_ family: Int32, _ bits: UnsafeRawPointer) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN) + 1) { text in
            guard inet_ntop(family, bits, text.baseAddress, socklen_t(text.count)) != nil else { return "?" }
            return String(cString: text.baseAddress!)
        }
    }

    public var description: String {
        family == .ipv4 ? "\(host):\(port)" : "[\(host)]:\(port)"
    }
}
