import DomainMatch

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
    /// The profile's minutes online today reached the policy's daily limit, until local
    /// midnight (docs/services.md#the-daily-limit).
    case dailyLimit = "daily_limit"
    /// The parent paused the profile on the gateway (docs/parent-page.md#overrides).
    case paused
    /// The parent's exception on the gateway allowed the name: rule = the exception's name.
    case exception
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
///
/// A rule matched in a list is a suffix of the name decided, and is kept as that name and
/// a label count: deciding makes no string (docs/performance.md#allocations-per-query);
/// `rule` and `reasonText` make one when asked, `appendReasonText` writes the text's bytes.
public struct Decision: Equatable, Sendable, CustomStringConvertible {
    public let action: Action
    public let reason: Reason
    public let category: Category?
    public let target: DomainName?
    private let matched: Matched?

    private enum Matched: Sendable {
        case text(String)
        /// The last `labels` labels of `name`.
        case suffix(DomainName, labels: Int)
    }

    public init(
        _ action: Action, _ reason: Reason, rule: String? = nil, category: Category? = nil,
        target: DomainName? = nil
    ) {
        self.action = action
        self.reason = reason
        matched = rule.map(Matched.text)
        self.category = category
        self.target = target
    }

    /// A decision whose rule is the last `labels` labels of `name` (`labels` ≥ 1).
    init(_ action: Action, _ reason: Reason, suffixOf name: DomainName, labels: Int, category: Category? = nil) {
        self.action = action
        self.reason = reason
        matched = .suffix(name, labels: labels)
        self.category = category
        target = nil
    }

    /// The matched rule.
    public var rule: String? {
        switch matched {
        case .text(let text)?: return text
        case .suffix(let name, let labels)?: return name.suffix(labels: labels).description
        case nil: return nil
        }
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

    /// Appends `reasonText`'s UTF-8 bytes to `bytes` without making the string (an EDE's
    /// text written straight into an answer).
    public func appendReasonText(to bytes: inout [UInt8]) {
        var head = reason.rawValue
        head.withUTF8 { bytes.append(contentsOf: $0) }
        switch reason {
        case .blockedDomain, .circumvention, .sni, .service, .limit:
            bytes.append(UInt8(ascii: ":"))
            _ = appendRule(to: &bytes)
        case .category:
            bytes.append(UInt8(ascii: ":"))
            var id = category?.id ?? ""
            id.withUTF8 { bytes.append(contentsOf: $0) }
        default: break
        }
    }

    /// Appends `rule`'s UTF-8 bytes to `bytes` without making the string; false (nothing
    /// appended) when there is no rule.
    public func appendRule(to bytes: inout [UInt8]) -> Bool {
        switch matched {
        case nil: return false
        case .text(var text)?: text.withUTF8 { bytes.append(contentsOf: $0) }
        case .suffix(let name, let labels)?:
            let start = name.suffixStart(labels: labels)
            name.bytes.withUnsafeBufferPointer { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[start...])) }
        }
        return true
    }

    public static func == (lhs: Decision, rhs: Decision) -> Bool {
        lhs.action == rhs.action && lhs.reason == rhs.reason && lhs.rule == rhs.rule && lhs.category == rhs.category
            && lhs.target == rhs.target
    }

    public var description: String {
        var text = "\(action.rawValue) \(reasonText)"
        if let target { text += " → \(target)" }
        return text
    }
}
