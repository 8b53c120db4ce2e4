/// `web_filter.level` (docs/decisions.md#categories): which categories a level adds to `blocked_categories`.
public enum FilterLevel: Equatable, Sendable, CustomStringConvertible {
    case strict, moderate, light
    /// `""`, `none` or `off`.
    case off
    /// Anything else: enforced as `moderate` and reported `partial`.
    case unknown(String)

    public init(_ raw: String) {
        switch raw.policyTrimmed.lowercasedASCII {
        case "strict": self = .strict
        case "moderate": self = .moderate
        case "light": self = .light
        case "", "none", "off": self = .off
        default: self = .unknown(raw)
        }
    }

    public var categories: [Category] {
        switch self {
        case .strict:
            return [
                .adult, .gambling, .dating, .drugs, .violence, .social, .gaming, .piracy, .malware, .phishing, .proxy,
            ]
        case .moderate, .unknown:
            return [.adult, .gambling, .dating, .drugs, .piracy, .malware, .phishing, .proxy]
        case .light:
            return [.adult, .malware, .phishing]
        case .off:
            return []
        }
    }

    public var description: String {
        switch self {
        case .strict: return "strict"
        case .moderate: return "moderate"
        case .light: return "light"
        case .off: return "off"
        case .unknown(let raw): return "\"\(raw)\" (unknown, enforced as moderate)"
        }
    }
}
