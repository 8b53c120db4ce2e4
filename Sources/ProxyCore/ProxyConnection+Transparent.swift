import DomainMatch
import HTTP1
import Policy

/// Connections the firewall redirected to the transparent listener (docs/network.md#transparent-mode):
/// the client never asked a proxy, so there is no CONNECT and no `200`. To port 443 (and
/// any port but 80) the ClientHello's server name is decided as the SNI check decides it,
/// failing closed the same way; a block ends in a TLS `access_denied` alert and a hit. To
/// port 80 each request is decided on its `Host`. An allowed name goes only to an address
/// the gateway's resolver gives for it (docs/network.md#the-destination-check): the
/// address the device dialled is its own choice, and a device that knows a blocked site's
/// address could otherwise send an allowed name there. A server name or `Host` that is an
/// address is decided as an IP literal. Hits carry the source `transparent`.
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
        case .serverName(let text, let offersECH):
            if let literal = Self.addressLiteral(text) { return toLiteral(literal, text, tunnel, policy, env) }
            guard let name = try? QueryName.parse(text) else { return unreadable(tunnel, policy, env) }
            if let refusal = policy.echRefusal(name, offersECH: offersECH) {
                return deny(name.description, refusal, env)
            }
            var named = tunnel
            named.serverName = name
            let decision = policy.decide(name)
            switch decision.action {
            case .block:
                return deny(name.description, decision, env)
            case .allow:
                return toName(named, name, decision, env)
            case .rewrite:
                guard let target = decision.target else {
                    return toName(named, name, decision, env)
                }
                let profile = env.profile(for: client, mac: clientMAC, user: proxyUser)
                profile.activity.recordRewrite(target: target)
                let pending = Pending(
                    purpose: .tunnel(
                        Tunnel(target: tunnel.target, rewriteTarget: target, serverName: name, transparent: true)),
                    origin: redirectedOrigin(.name(target), port: tunnel.target.port, env), profile: profile,
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

    /// Only the address to go by (no server name; or bytes that are not a hello, which an
    /// unfiltered profile or a port other than 443 may send): the original destination,
    /// already decided as an IP literal or not filtered; what the client sent goes first.
    mutating func passThrough(_ tunnel: Tunnel, _ env: ProxyEnvironment) -> [ProxyAction] {
        guard case .address(let address) = tunnel.target.host else { return close() }
        let profile = env.profile(for: client, mac: clientMAC, user: proxyUser)
        profile.activity.recordQuery(from: SeenClient(address: client, mac: deviceMAC))
        return open(
            Pending(
                purpose: .tunnel(tunnel), origin: Origin(destination: .address(address), port: tunnel.target.port),
                profile: profile, inspect: false), env)
    }

    /// An allowed server name: resolved as a CONNECT's host is (the same lookup, local
    /// destinations refused the same way), then connected on the dialled port.
    mutating func toName(
        _ tunnel: Tunnel, _ name: DomainName, _ decision: Decision, _ env: ProxyEnvironment
    ) -> [ProxyAction] {
        let profile = env.profile(for: client, mac: clientMAC, user: proxyUser)
        profile.activity.recordQuery(from: SeenClient(address: client, mac: deviceMAC))
        return open(
            Pending(
                purpose: .tunnel(tunnel), origin: redirectedOrigin(.name(name), port: tunnel.target.port, env),
                profile: profile, inspect: profile.rules.inspectsAnswer(after: decision)), env)
    }

    /// A server name that is an address (RFC 6066 §3 forbids it, so only a tool sends one):
    /// decided as the IP literal it is, as a hello without a name is, and then that address
    /// is the one the tunnel is for.
    mutating func toLiteral(
        _ literal: IPAddress, _ text: String, _ tunnel: Tunnel, _ policy: TargetPolicy, _ env: ProxyEnvironment
    ) -> [ProxyAction] {
        let target = ProxyTarget(host: .address(literal), port: tunnel.target.port, path: "", authority: text)
        switch policy.verdict(target, isConnect: false) {
        case .refuse(let block): return deny(literal.description, block.decision, env)
        case .resolve, .address: break
        }
        let profile = env.profile(for: client, mac: clientMAC, user: proxyUser)
        profile.activity.recordQuery(from: SeenClient(address: client, mac: deviceMAC))
        return open(
            Pending(
                purpose: .tunnel(Tunnel(target: target, rewriteTarget: nil, transparent: true)),
                origin: redirectedOrigin(.address(literal), port: target.port, env), profile: profile,
                inspect: false), env)
    }

    /// Where a redirected connection's allowed name (or address) goes: to its own
    /// addresses, or under `transparent_destination = verify` to the dialled address, which
    /// `open` and `lookupFinished` check against them (docs/network.md#the-destination-check).
    func redirectedOrigin(_ destination: Origin.Destination, port: UInt16, _ env: ProxyEnvironment) -> Origin {
        var origin = Origin(destination: destination, port: port)
        if env.settings.transparentDestination == .verify { origin.dialled = redirectedTo?.address }
        return origin
    }

    /// The dialled address is not the name's: refused as `circumvention:destination`, with
    /// a hit, the way a block found by the lookup is refused.
    mutating func refuseDestination(
        _ pending: Pending, _ env: ProxyEnvironment, readNext: Bool = true
    ) -> [ProxyAction] {
        let decision = TargetPolicy.destinationMismatch
        let name: String
        switch pending.origin.destination {
        case .name(let asked): name = asked.description
        case .address(let address), .childPage(let address): name = address.description
        }
        return [.record(hit(name, decision, env))]
            + refuseAfterLookup(BlockReason(decision), pending, env, readNext: readNext)
    }

    /// A server name that is an IPv4 or IPv6 address (bracketed or not), which no name
    /// check may see as a name.
    static func addressLiteral(_ text: String) -> IPAddress? {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        return IPAddress(text)
    }

    /// A redirected plain-HTTP request's target: its `Host` and origin-form path (RFC 9112
    /// §3.2.1); where it goes is its host's address (`redirectedOrigin`), whatever
    /// address the device dialled.
    static func redirectedTarget(_ head: RequestHead) throws(ProxyError) -> ProxyTarget {
        guard !head.isConnect, head.target.hasPrefix("/"), let host = head.fields.first("Host"), !host.isEmpty else {
            throw .badTarget(head.target)
        }
        return try ProxyTarget.absolute("http://\(host)\(head.target)")
    }
}
