import DomainMatch

/// Where a block happened.
public enum HitSource: String, Sendable {
    /// A DNS answer; the HTTP proxy (CONNECT, plain HTTP); a connection the firewall
    /// redirected to the transparent listener.
    case dns, proxy, transparent
}

/// One blocked query or refused proxy request (docs/sync.md#hits). Rewrites and local answers are
/// not hits.
public struct Hit: Sendable, Equatable {
    public let profile: String
    /// The name the client asked for.
    public let name: String
    /// The matched entry (for a CNAME-chain block, the chain name).
    public let rule: String?
    public let reason: Reason
    /// The reason text of docs/decisions.md#the-decision-order (`category:adult`, …).
    public let reasonText: String
    public let category: Category?
    public let client: IPAddress?
    public let source: HitSource
    /// Unix seconds.
    public let time: Int64

    public init(
        profile: String, name: String, decision: Decision, rule: String? = nil, client: IPAddress?,
        source: HitSource, time: Int64
    ) {
        self.profile = profile
        self.name = name
        self.rule = rule ?? decision.rule
        reason = decision.reason
        reasonText = decision.reasonText
        category = decision.category
        self.client = client
        self.source = source
        self.time = time
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
