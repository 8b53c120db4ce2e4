import DomainMatch
import HTTP1
import Policy

/// Connections the firewall redirected to the transparent listener (docs/network.md#transparent-mode):
/// the client never asked a proxy, so there is no CONNECT and no `200`. To port 443 (and
/// any port but 80) the ClientHello's server name is decided as the SNI check decides it,
/// failing closed the same way; a block ends in a TLS `access_denied` alert and a hit; an
/// allowed connection goes to the original destination, never re-resolved (a safe-search
/// rewrite goes to the rewrite target's address, as a CONNECT does). To port 80 each
/// request is decided on its `Host` and forwarded to the original destination. Hits
/// carry the source `transparent`.
extension ProxyConnection {
    /// A connection accepted on the transparent listener that was going to `destination`.
    public static func redirected(
        client: IPAddress, arrivedOn: Endpoint, destination: Endpoint, now: UInt64
    ) -> ProxyConnection {
        var connection = ProxyConnection(client: client, arrivedOn: arrivedOn, now: now)
        connection.redirectedTo = destination
        guard destination.port != 80 else { return connection }  // plain HTTP: request heads
        let target = ProxyTarget(
            host: .address(destination.address), port: destination.port, path: "", authority: destination.description)
        connection.state = .inspecting(Tunnel(target: target, rewriteTarget: nil, transparent: true))
        connection.deadline = now &+ ProxyLimits.inspectTimeout
        return connection
    }

    /// A hit of this connection: its client, and the source its door gives.
    func hit(_ name: String, _ decision: Decision, _ env: ProxyEnvironment) -> Hit {
        env.hit(
            name, decision, client: client, mac: clientMAC, user: proxyUser,
            source: redirectedTo == nil ? .proxy : .transparent)
    }

    /// The first bytes of a redirected TLS connection, scanned.
    mutating func inspectRedirected(
        _ tunnel: Tunnel, _ scan: ClientHelloScan, _ policy: TargetPolicy, _ env: ProxyEnvironment
    ) -> [ProxyAction] {
        switch scan {
        case .needMore:
            guard clientIn.readableBytes >= ProxyLimits.inspectBytes else { return [] }
            return unreadable(tunnel, policy, env)
        case .serverName(let text):
            guard let name = try? QueryName.parse(text) else { return unreadable(tunnel, policy, env) }
            var named = tunnel
            named.serverName = name
            let decision = policy.decide(name)
            switch decision.action {
            case .block:
                return deny(name.description, decision, env)
            case .allow:
                return passThrough(named, env)
            case .rewrite:
                guard let target = decision.target else {
                    return passThrough(named, env)
                }
                let profile = env.profile(for: client, mac: clientMAC, user: proxyUser)
                profile.activity.recordRewrite(target: target)
                let pending = Pending(
                    purpose: .tunnel(
                        Tunnel(target: tunnel.target, rewriteTarget: target, serverName: name, transparent: true)),
                    origin: Origin(destination: .name(target), port: tunnel.target.port), profile: profile,
                    inspect: false)
                return open(pending, env)
            }
        case .noServerName:
            // Only the address says where it goes: decided as an IP literal.
            switch policy.verdict(tunnel.target, isConnect: false) {
            case .refuse(let block): return deny(tunnel.target.host.description, block.decision, env)
            case .resolve, .address: return passThrough(tunnel, env)
            }
        case .notTLS, .malformed:
            return unreadable(tunnel, policy, env)
        }
    }

    /// Refused: a TLS `access_denied` alert, so the browser says so at once instead of
    /// retrying, then the close; and a hit.
    mutating func deny(_ name: String, _ decision: Decision, _ env: ProxyEnvironment) -> [ProxyAction] {
        clientOut.writeBytes(ProxyResponse.accessDeniedAlert)
        return [.record(hit(name, decision, env))] + closeAfterResponse(env)
    }

    /// Allowed: connect to the original destination; what the client sent goes first.
    mutating func passThrough(_ tunnel: Tunnel, _ env: ProxyEnvironment) -> [ProxyAction] {
        guard case .address(let address) = tunnel.target.host else { return close() }
        let profile = env.profile(for: client, mac: clientMAC, user: proxyUser)
        profile.activity.recordQuery(from: SeenClient(address: client, mac: clientMAC))
        return open(
            Pending(
                purpose: .tunnel(tunnel), origin: Origin(destination: .address(address), port: tunnel.target.port),
                profile: profile, inspect: false), env)
    }

    /// A redirected plain-HTTP request's target: its `Host` and origin-form path (RFC 9112
    /// §3.2.1); the connection goes to the original destination whatever `Host` says.
    static func redirectedTarget(_ head: RequestHead) throws(ProxyError) -> ProxyTarget {
        guard !head.isConnect, head.target.hasPrefix("/"), let host = head.fields.first("Host"), !host.isEmpty else {
            throw .badTarget(head.target)
        }
        return try ProxyTarget.absolute("http://\(host)\(head.target)")
    }
}
