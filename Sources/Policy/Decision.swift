/// What to do with a name.
public enum Action: String, Sendable, Equatable {
    case allow, block, rewrite
}

/// Why: the reason vocabulary of docs/decisions.md#the-decision-order, the same everywhere (EDE text,
/// `X-Phosra-Block`, hits, metrics, logs).
public enum Reason: String, Sendable, Equatable, CaseIterable {
    case system
    case downtime
    case schedule
    case blockedDomain = "blocked_domain"
    case circumvention
    case category
    case safeSearch = "safe_search"
    case allowedDomain = "allowed_domain"
    case `default`
    /// An app the parent blocked (or whose kind `dm_restriction`/`multiplayer_mode` turns
    /// off), as a network service: rule = the service id.
    case service
    /// An app whose daily budget the profile has spent, until local midnight: rule = the
    /// service id.
    case limit
    // Proxy-only refusals (docs/proxy.md).
    case ipLiteral = "ip_literal"
    case port
    case sni
    /// A filtered client's tunnel on port 443 whose first bytes are not a readable
    /// ClientHello with a valid name, so the name it goes to cannot be decided.
    case tlsUnreadable = "tls_unreadable"
    /// A target that would reach the gateway itself or its link (loopback, unspecified,
    /// link-local, one of its own addresses), after resolution.
    case localDestination = "local_destination"
}

/// The outcome of `decide`: an action, its reason, the matched rule (normalised entry),
/// the category id and the rewrite target, each nil when not applicable.
public struct Decision: Equatable, Sendable, CustomStringConvertible {
    public let action: Action
    public let reason: Reason
    public let rule: String?
    public let category: Category?
    public let target: String?

    public init(
        _ action: Action, _ reason: Reason, rule: String? = nil, category: Category? = nil, target: String? = nil
    ) {
        self.action = action
        self.reason = reason
        self.rule = rule
        self.category = category
        self.target = target
    }

    /// The reason as text: `blocked_domain:<rule>`, `category:<id>`,
    /// `circumvention:<rule>`, `sni:<name>`, or the bare reason.
    public var reasonText: String {
        switch reason {
        case .blockedDomain, .circumvention, .sni, .service, .limit: return "\(reason.rawValue):\(rule ?? "")"
        case .category: return "category:\(category?.id ?? "")"
        default: return reason.rawValue
        }
    }

    public var description: String {
        var text = "\(action.rawValue) \(reasonText)"
        if let target { text += " → \(target)" }
        return text
    }
}
