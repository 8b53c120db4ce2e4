import DomainMatch

/// Where a block happened.
public enum HitSource: String, Sendable {
    /// A DNS answer; the HTTP proxy (CONNECT, plain HTTP); a connection the firewall
    /// redirected to the transparent listener; a connection the firewall refused
    /// (docs/network.md#egress).
    case dns, proxy, transparent, firewall
}

/// One blocked query or refused proxy request (docs/sync.md#hits). Rewrites and local answers are
/// not hits.
///
/// Made on a loop thread for every blocked query, so it keeps the name and the decision as
/// they are and makes their text only when a recorder asks for it
/// (docs/performance.md#allocations-per-query).
public struct Hit: Sendable, Equatable {
    public let profile: String
    public let client: IPAddress?
    public let source: HitSource
    /// Unix seconds.
    public let time: Int64
    let asked: Asked
    let decision: Decision
    private let matched: String?

    enum Asked: Sendable {
        case text(String)
        case domain(DomainName)
    }

    public init(
        profile: String, name: String, decision: Decision, rule: String? = nil, client: IPAddress?,
        source: HitSource, time: Int64
    ) {
        self.init(profile: profile, asked: .text(name), decision: decision, rule: rule, client, source, time)
    }

    public init(
        profile: String, name: DomainName, decision: Decision, rule: String? = nil, client: IPAddress?,
        source: HitSource, time: Int64
    ) {
        self.init(profile: profile, asked: .domain(name), decision: decision, rule: rule, client, source, time)
    }

    private init(
        profile: String, asked: Asked, decision: Decision, rule: String?, _ client: IPAddress?, _ source: HitSource,
        _ time: Int64
    ) {
        self.profile = profile
        self.asked = asked
        self.decision = decision
        matched = rule
        self.client = client
        self.source = source
        self.time = time
    }

    /// The name the client asked for.
    public var name: String {
        switch asked {
        case .text(let text): return text
        case .domain(let name): return name.description
        }
    }

    /// The matched entry (for a CNAME-chain block, the chain name).
    public var rule: String? { matched ?? decision.rule }
    public var reason: Reason { decision.reason }
    /// The reason text of docs/decisions.md#the-decision-order (`category:adult`, …).
    public var reasonText: String { decision.reasonText }
    public var category: Category? { decision.category }

    /// Appends `rule`'s UTF-8 bytes to `bytes` without making the string (a recorder
    /// compares it with the rule it holds); false (nothing appended) when there is none.
    public func appendRule(to bytes: inout [UInt8]) -> Bool {
        guard var matched else { return decision.appendRule(to: &bytes) }
        matched.withUTF8 { bytes.append(contentsOf: $0) }
        return true
    }

    public static func == (lhs: Hit, rhs: Hit) -> Bool {
        lhs.profile == rhs.profile && lhs.name == rhs.name && lhs.rule == rhs.rule && lhs.reason == rhs.reason
            && lhs.reasonText == rhs.reasonText && lhs.category == rhs.category && lhs.client == rhs.client
            && lhs.source == rhs.source && lhs.time == rhs.time
    }
}

/// Receives hits from the proxies; the SQLite-backed reporter implements it.
public protocol HitRecorder: Sendable {
    func record(_ hit: Hit)
}

/// Discards hits (tests, and `run` until a store is configured).
public struct DiscardingHitRecorder: HitRecorder {
    public init() {}
    public func record(_ hit: Hit) {}
}
