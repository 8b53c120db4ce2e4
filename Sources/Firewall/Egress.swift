import DomainMatch
import Policy

/// Where a filtered profile's devices may go besides the gateway (docs/network.md#egress),
/// the profile key `egress`.
public enum Egress: String, Sendable, CaseIterable {
    /// The gateway's DNS, TCP 80 and 443, the built-in set phones and consoles need and
    /// `egress_allow`; everything else is refused at once and counted as a hit.
    case web
    /// Every port, as before the egress rules: DNS and the web are still caught.
    case open
}

/// One entry of `egress_allow`: a protocol, a port or a range of ports, and optionally
/// the only addresses it opens to. Written `tcp/993`, `udp/3478-3481` or
/// `tcp/22@203.0.113.0/24`.
public struct EgressRule: Sendable, Equatable, CustomStringConvertible {
    public enum Transport: String, Sendable, CaseIterable {
        case tcp, udp
    }

    public var transport: Transport
    public var ports: ClosedRange<UInt16>
    /// Nil: any destination.
    public var destination: AddressRange?

    public init(_ transport: Transport, _ ports: ClosedRange<UInt16>, to destination: AddressRange? = nil) {
        self.transport = transport
        self.ports = ports
        self.destination = destination.map(\.network)
    }

    /// Why a text is not an entry; the configuration adds file, line and key.
    public enum ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        case noProtocol(String)
        case unknownProtocol(String)
        case badPort(String)
        case reversedRange(String)
        case badDestination(String)

        public var description: String {
            switch self {
            case .noProtocol(let text):
                "\"\(text)\" is not PROTOCOL/PORT[-PORT][@ADDRESS] (e.g. tcp/993, udp/3478-3481, tcp/22@203.0.113.0/24)"
            case .unknownProtocol(let text): "\"\(text)\" is not a protocol: tcp or udp"
            case .badPort(let text): "\"\(text)\" is not a port (1 to 65535)"
            case .reversedRange(let text): "\"\(text)\": the first port is above the last"
            case .badDestination(let text): "\"\(text)\" is not an IPv4 or IPv6 address or CIDR"
            }
        }
    }

    /// The entry `text` writes, checked piece by piece so the error names the piece.
    public static func parse(_ text: String) throws(ParseError) -> EgressRule {
        let (head, destinationText) = Self.split(text, at: "@")
        let (protocolText, portsText) = Self.split(head, at: "/")
        guard let portsText else { throw .noProtocol(text) }
        guard let transport = Transport(rawValue: protocolText.lowercased()) else {
            throw .unknownProtocol(protocolText)
        }
        let (lowText, highText) = Self.split(portsText, at: "-")
        func port(_ text: String) throws(ParseError) -> UInt16 {
            guard text.utf8.count <= 5, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = UInt16(text),
                value > 0
            else { throw .badPort(text) }
            return value
        }
        let low = try port(lowText)
        let high = try highText.map { (text: String) throws(ParseError) -> UInt16 in try port(text) } ?? low
        guard low <= high else { throw .reversedRange(portsText) }
        var destination: AddressRange?
        if let destinationText {
            guard let range = AddressRange(destinationText) else { throw .badDestination(destinationText) }
            destination = range
        }
        return EgressRule(transport, low...high, to: destination)
    }

    /// `tcp/993`, `udp/3478-3481`, `tcp/22@203.0.113.0/24`: what `parse` reads.
    public var description: String {
        let portText = ports.count == 1 ? "\(ports.lowerBound)" : "\(ports.lowerBound)-\(ports.upperBound)"
        return "\(transport.rawValue)/\(portText)" + (destination.map { "@\($0)" } ?? "")
    }

    /// `text` before and after the first `separator`; nil after when there is none.
    private static func split(_ text: String, at separator: Character) -> (String, String?) {
        guard let index = text.firstIndex(of: separator) else { return (text, nil) }
        return (String(text[..<index]), String(text[text.index(after: index)...]))
    }
}

extension AddressRange {
    /// The range with the bits past its prefix cleared: `203.0.113.5/24` is `203.0.113.0/24`,
    /// the form nftables takes.
    var network: AddressRange {
        let length = prefixLength
        switch address {
        case .v4(let value):
            let mask: UInt32 = length == 0 ? 0 : ~UInt32(0) << UInt32(32 - length)
            return AddressRange(address: .v4(value & mask), prefixLength: length)
        case .v6(let high, let low):
            let highMask: UInt64 = length == 0 ? 0 : length >= 64 ? ~0 : ~UInt64(0) << UInt64(64 - length)
            let lowMask: UInt64 = length <= 64 ? 0 : length == 128 ? ~0 : ~UInt64(0) << UInt64(128 - length)
            return AddressRange(address: .v6(high: high & highMask, low: low & lowMask), prefixLength: length)
        }
    }
}
