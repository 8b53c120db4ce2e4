import DomainMatch
import Policy

/// The forms a configuration string may be required to have, so a bad value is an error
/// naming file, line and key when the file is read, not when a feature first uses it.
public enum ValueFormat: Sendable, Equatable {
    case listenAddress
    case upstream
    case addressRange
    case port
    case blockMode
    case localForward
    /// The API base URL: `https://host[:port]/path` (or a bare host).
    case url

    var name: String {
        switch self {
        case .listenAddress: return "ADDR:PORT"
        case .upstream: return "upstream (IP[:port], tcp://IP[:port], tls://IP[:853]#name)"
        case .addressRange: return "IP or CIDR"
        case .port: return "port"
        case .blockMode: return "block mode"
        case .localForward: return "ZONE=IP[:port]"
        case .url: return "URL"
        }
    }

    /// Nil when `text` has this form, else what was expected.
    func problem(_ text: String) -> String? {
        let valid: Bool
        switch self {
        case .listenAddress: valid = ListenAddress(text) != nil
        case .upstream: valid = UpstreamSpec(text) != nil
        case .addressRange: valid = AddressRange(text) != nil
        case .port: valid = UInt16(text).map { $0 > 0 } ?? false
        case .blockMode: valid = BlockMode(text) != nil
        case .localForward: valid = LocalForward(text) != nil
        case .url: valid = (try? ListEntry.parse(text, kind: .block, allowSingleLabel: true).get()) != nil
        }
        guard !valid else { return nil }
        switch self {
        case .blockMode: return "\"\(text)\" is not nxdomain, null, refused or ip:V4[,V6]"
        case .upstream: return "\"\(text)\" is not an upstream (IP[:port], tcp://IP[:port] or tls://IP[:853]#servername)"
        default: return "\"\(text)\" is not a valid \(name)"
        }
    }
}
