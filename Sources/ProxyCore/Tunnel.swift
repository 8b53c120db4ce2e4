import DomainMatch
import Policy

/// A CONNECT tunnel as the policy sees it: where the client asked to go, where the
/// tunnel really goes (a safe-search rewrite's target), and the TLS server name once the
/// SNI check has read it. The loop re-decides every open tunnel from this (docs/proxy.md#open-connections-follow-the-policy).
public struct Tunnel: Equatable, Sendable {
    public let target: ProxyTarget
    /// The rewrite target the tunnel was connected to, or nil for the host itself.
    public let rewriteTarget: DomainName?
    /// The SNI of the client's ClientHello, when there was one.
    public var serverName: DomainName?
    /// A connection the firewall redirected (docs/network.md#transparent-mode): `target` is
    /// its original destination, an address the client chose, so only the server name
    /// speaks for it (without one, the address is decided as an IP literal).
    public let transparent: Bool

    public init(
        target: ProxyTarget, rewriteTarget: DomainName?, serverName: DomainName? = nil, transparent: Bool = false
    ) {
        self.target = target
        self.rewriteTarget = rewriteTarget
        self.serverName = serverName
        self.transparent = transparent
    }

    /// The name the tunnel's bytes are for: the TLS server name when read, else the host asked.
    public var usedName: DomainName? {
        if let serverName { return serverName }
        if case .name(let name) = target.host { return name }
        return nil
    }

    /// Why this tunnel may no longer stay open under `policy`, or nil when it may:
    /// its host is now refused (a cutoff began, a new policy blocks it: the block is the
    /// host's reason), or its server name is (`sni:<name>`). A host now rewritten
    /// elsewhere closes too, without a hit (a rewrite is not a block).
    public func judge(_ policy: TargetPolicy) -> TunnelJudgement {
        if transparent, let serverName {
            let decision = policy.decide(serverName)
            guard decision.action == .block else { return .keep }
            return .close(hit: (serverName.description, decision))
        }
        switch policy.verdict(target, isConnect: true) {
        case .refuse(let block):
            return .close(hit: (target.host.description, block.decision))
        case .resolve(_, let decision) where decision.action == .rewrite && decision.target != rewriteTarget:
            return .close(hit: nil)
        default:
            break
        }
        if let serverName, let refusal = Tunnel.judgeServerName(serverName, rewriteTarget: rewriteTarget, policy) {
            return .close(hit: (serverName.description, refusal))
        }
        return .keep
    }

    /// The SNI check of docs/proxy.md#the-sni-check for one name: block, or a rewrite whose target the
    /// tunnel is not already going to → the `sni:<name>` decision to close with.
    static func judgeServerName(_ name: DomainName, rewriteTarget: DomainName?, _ policy: TargetPolicy) -> Decision? {
        let decision = policy.decide(name)
        switch decision.action {
        case .block: break
        case .rewrite where decision.target != rewriteTarget: break
        default: return nil
        }
        return Decision(.block, .sni, rule: name.description, category: decision.category)
    }
}

/// What re-deciding a tunnel concluded.
public enum TunnelJudgement: Equatable, Sendable {
    case keep
    /// Close it, recording a hit on (name, decision) when it was a block.
    case close(hit: (String, Decision)?)

    public static func == (lhs: TunnelJudgement, rhs: TunnelJudgement) -> Bool {
        switch (lhs, rhs) {
        case (.keep, .keep): true
        case (.close(let a), .close(let b)): a?.0 == b?.0 && a?.1 == b?.1
        default: false
        }
    }
}
