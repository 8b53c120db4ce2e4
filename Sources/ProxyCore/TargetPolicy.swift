import DomainMatch
import Policy
import Zoneinfo

/// What the proxy does with a request's target.
public enum Verdict: Equatable, Sendable {
    /// 403 with this reason; the upstream is never contacted.
    case refuse(BlockReason)
    /// Resolve `name` (the host, or for a rewrite the rewrite's target) through the
    /// gateway's resolver and connect there; `decision` is the host's.
    case resolve(DomainName, Decision)
    /// Connect to this IP literal.
    case address(IPAddress, Decision)
}

/// The decision of docs/decisions.md#the-decision-order applied to a proxy target (docs/proxy.md#connect), for one client at one
/// instant. Checks in order, each with its reason: the CONNECT port (`port`), an IP
/// literal (`ip_literal`: refused unless `allow_ip_connect`, and always when the engine
/// blocks it — a cutoff or a blocked IP entry — but never when it is system-allowed),
/// then the engine's decision on the name. Pure.
public struct TargetPolicy {
    public let engine: DecisionEngine<LabelTrie>
    /// Its rules, its minutes per app service (a spent budget refuses its service) and the
    /// parent's overrides.
    public let profile: Profile
    /// Unix seconds, and the policy zone's wall clock then.
    public let instant: Int64
    public let local: LocalDateTime
    public let settings: ProxySettings

    public init(
        engine: DecisionEngine<LabelTrie>, profile: Profile, instant: Int64, local: LocalDateTime,
        settings: ProxySettings
    ) {
        self.engine = engine
        self.profile = profile
        self.instant = instant
        self.local = local
        self.settings = settings
    }

    public var rules: PolicyRules { profile.rules }

    public func verdict(_ target: ProxyTarget, isConnect: Bool) -> Verdict {
        if isConnect, !settings.connectPorts.contains(target.port) {
            return .refuse(BlockReason(Decision(.block, .port, rule: "\(target.port)")))
        }
        switch target.host {
        case .address(let address):
            let decision = decide(Self.name(of: address))
            if decision.reason == .system { return .address(address, decision) }
            guard settings.allowIPConnect, decision.action != .block else {
                return .refuse(BlockReason(Decision(.block, .ipLiteral, rule: address.description)))
            }
            return .address(address, decision)
        case .name(let name):
            let decision = decide(name)
            switch decision.action {
            case .block: return .refuse(BlockReason(decision))
            case .allow: return .resolve(name, decision)
            case .rewrite:
                return .resolve(decision.target ?? name, decision)
            }
        }
    }

    public func decide(_ name: DomainName) -> Decision {
        engine.decide(name, profile: profile, at: instant, local: local)
    }

    /// A redirected connection whose allowed name does not own the address the device
    /// dialled (docs/network.md#the-destination-check).
    public static let destinationMismatch = Decision(.block, .circumvention, rule: "destination")

    /// The public names ECH providers put in the outer ClientHello, behind which any of
    /// their sites may hide (docs/network.md#the-destination-check, which gives the sources).
    static let echPublicNames: Set<DomainName> = Set(
        ["cloudflare-ech.com", "cover.defo.ie"].compactMap { try? QueryName.parse($0) })

    /// `circumvention:ech` for a filtered profile's hello that offers ECH under a
    /// provider's public name: the site it is for is encrypted, so it cannot be decided.
    /// A GREASE ECH hello names its real site in the clear and is decided on that name.
    public func echRefusal(_ serverName: DomainName, offersECH: Bool) -> Decision? {
        guard offersECH, rules.filtered, Self.echPublicNames.contains(serverName) else { return nil }
        return Decision(.block, .circumvention, rule: "ech")
    }

    /// An address as the engine sees names: a dotted quad, or an IPv6 literal as one label;
    /// both match the lists' IP entries (docs/decisions.md#list-entries).
    static func name(of address: IPAddress) -> DomainName {
        if case .v4 = address, let name = try? QueryName.parse(address.description) { return name }
        return DomainName(wireLabels: [Array(address.description.utf8)])!
    }
}
