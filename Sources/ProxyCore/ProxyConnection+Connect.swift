import Bytes
import DomainMatch
import Policy

/// Reaching the origin (docs/proxy.md#connect): the lookup through the gateway's resolver, the
/// connect within `connect_timeout` (over every address the lookup gave), then for a
/// tunnel `200 Connection established`, the SNI check (docs/proxy.md#the-sni-check) and the relay; the tunnel
/// re-decided every second while open (docs/proxy.md#open-connections-follow-the-policy).
extension ProxyConnection {
    /// Starts resolving (a name) or connecting (an IP literal); the connect timeout runs
    /// from here.
    mutating func open(_ pending: Pending, _ env: ProxyEnvironment) -> [ProxyAction] {
        deadline = env.now &+ env.settings.connectTimeout
        upstreamIn.clear()
        upstreamOut.clear()
        switch pending.origin.destination {
        case .name(let name):
            // RFC 6761 §6.3: `localhost` is this host whatever an upstream says of it.
            if !env.settings.allowLocalDestinations, name.isSubdomain(of: Self.localhost) {
                return refuseAfterLookup(Self.localRefusal(name.description), pending, env, readNext: false)
            }
            state = .resolving(pending)
            return [.lookup(pending.query(name, inspect: pending.inspect))]
        case .address(let address):
            if let local = localDestination(in: [address], env) {
                return refuseAfterLookup(Self.localRefusal(local), pending, env, readNext: false)
            }
            if let dialled = pending.origin.dialled, dialled.unmapped != address.unmapped {
                return refuseDestination(pending, env, readNext: false)
            }
            return connect(pending, to: address)
        case .childPage(let address):
            return connect(pending, to: address)
        }
    }

    /// Connects to the one address of an origin that needs no lookup.
    private mutating func connect(_ pending: Pending, to address: IPAddress) -> [ProxyAction] {
        var pending = pending
        pending.addresses = [Endpoint(address, port: pending.origin.port)]
        state = .connecting(pending)
        return [.connect(pending.addresses[0])]
    }

    /// The resolver answered.
    public mutating func lookupFinished(_ result: ResolvedHost, _ env: ProxyEnvironment) -> [ProxyAction] {
        guard case .resolving(var pending) = state else { return [] }
        switch result {
        case .addresses(let found):
            // One local address among them refuses the name: an answer cannot smuggle one in.
            let name: DomainName? = if case .name(let name) = pending.origin.destination { name } else { nil }
            if let local = localDestination(in: found, publicName: name, env) {
                return refuseAfterLookup(Self.localRefusal(local), pending, env)
            }
            // 0.0.0.0 and :: would reach this machine itself, even where local ones may be reached.
            pending.addresses = found.filter { $0.unmapped != .v4(0) && $0 != .v6(high: 0, low: 0) }
                .map { Endpoint($0, port: pending.origin.port) }
            if let dialled = pending.origin.dialled {
                // docs/network.md#the-destination-check: the dialled address, if the name owns it.
                guard pending.addresses.contains(where: { $0.address.unmapped == dialled.unmapped }) else {
                    return refuseDestination(pending, env)
                }
                pending.addresses = [Endpoint(dialled, port: pending.origin.port)]
            }
            guard let first = pending.addresses.first else { return fail(502, "no address for \(pending.origin)", env) }
            state = .connecting(pending)
            return [.connect(first)]
        case .blocked(let decision):
            // The resolver's answer inspection blocked it, and recorded the hit itself.
            return refuseAfterLookup(BlockReason(decision), pending, env)
        case .rewrite(let target):
            // The chain reached a safe-search name: its target, as a DNS client gets it.
            return [.lookup(pending.query(target, inspect: false))]
        case .noAddress, .notFound:
            return fail(502, "cannot resolve \(pending.origin)", env)
        case .failed:
            return fail(502, "the resolver did not answer for \(pending.origin)", env)
        }
    }

    /// The connect to `addresses[next]` finished.
    public mutating func connected(_ env: ProxyEnvironment) -> [ProxyAction] {
        guard case .connecting(let pending) = state else { return [] }
        switch pending.purpose {
        case .tunnel(let tunnel) where tunnel.transparent:
            // The hello already read goes first; no `200` (the client never asked a proxy).
            return startRelay(tunnel)
        case .tunnel(let tunnel):
            clientOut.writeBytes(ProxyResponse.established)
            state = .inspecting(tunnel)
            deadline = env.now &+ ProxyLimits.inspectTimeout
            return inspect(tunnel, env)
        case .forward(let exchange):
            return send(exchange, env)
        }
    }

    /// The connect to `addresses[next]` failed: the next address, or 502.
    public mutating func connectFailed(_ env: ProxyEnvironment) -> [ProxyAction] {
        guard case .connecting(var pending) = state else { return [] }
        pending.next += 1
        guard pending.next < pending.addresses.count else {
            return fail(502, "cannot connect to \(pending.origin)", env)
        }
        state = .connecting(pending)
        return [.connect(pending.addresses[pending.next])]
    }

    /// docs/proxy.md#the-sni-check: the client's first bytes, up to 16 KiB or 2 s, decided as
    /// soon as a ClientHello is complete. Its server name blocked (or rewritten elsewhere),
    /// or an ECH provider's public name over an encrypted hello: closed with a hit. A hello without a server name is relayed: the CONNECT host was
    /// decided and the tunnel goes only to its addresses. Anything else — another protocol,
    /// a malformed hello, a name that is not a valid name, 16 KiB without a complete hello —
    /// is relayed only where the parent opened a port knowingly or the profile does not
    /// filter; a filtered client on port 443 is closed with `tls_unreadable`, since what it
    /// reaches could not be decided.
    mutating func inspect(_ tunnel: Tunnel, _ env: ProxyEnvironment) -> [ProxyAction] {
        let policy = env.policy(for: client, mac: clientMAC, user: proxyUser)
        // Only the first 16 KiB are looked at: a hello longer than that is unreadable
        // however the client's bytes were split into reads.
        let scan = clientIn.withUnsafeReadableBytes {
            ClientHello.scan(UnsafeRawBufferPointer(rebasing: $0.prefix(ProxyLimits.inspectBytes)))
        }
        if tunnel.transparent { return inspectRedirected(tunnel, scan, policy, env) }
        switch scan {
        case .needMore:
            guard clientIn.readableBytes >= ProxyLimits.inspectBytes else { return [] }
            return unreadable(tunnel, policy, env)
        case .serverName(let text, let offersECH):
            guard let name = try? QueryName.parse(text) else { return unreadable(tunnel, policy, env) }
            if let refusal =
                policy.echRefusal(name, offersECH: offersECH)
                ?? Tunnel.judgeServerName(name, rewriteTarget: tunnel.rewriteTarget, policy)
            {
                return [.record(hit(name.description, refusal, env))]
                    + close()
            }
            var named = tunnel
            named.serverName = name
            return startRelay(named)
        case .noServerName:
            return startRelay(tunnel)
        case .notTLS, .malformed:
            return unreadable(tunnel, policy, env)
        }
    }

    /// First bytes that say nothing decidable (docs/proxy.md#the-sni-check): closed with a
    /// `tls_unreadable` hit on the CONNECT host when the client's profile filters and the
    /// port is 443; relayed otherwise.
    mutating func unreadable(_ tunnel: Tunnel, _ policy: TargetPolicy, _ env: ProxyEnvironment) -> [ProxyAction] {
        guard policy.rules.filtered, tunnel.target.port == 443 else {
            return tunnel.transparent ? passThrough(tunnel, env) : startRelay(tunnel)
        }
        let decision = Decision(.block, .tlsUnreadable)
        return [
            .record(hit(tunnel.target.host.description, decision, env))
        ] + close()
    }

    /// What the client sent so far goes to the origin first, then splice takes over.
    mutating func startRelay(_ tunnel: Tunnel) -> [ProxyAction] {
        swap(&clientIn, &upstreamOut)
        clientIn = ByteBuffer(capacity: 0)
        state = .relaying(tunnel)
        deadline = nil
        return [.relay]
    }

    /// How recent a tunnel's last bytes must be for a tick to count it as in use: the
    /// loop's tick interval.
    static let usageWindow: UInt64 = 1_000_000_000

    /// Once a second for an open tunnel or plain-HTTP exchange, and at once when a new
    /// snapshot is published (docs/proxy.md#open-connections-follow-the-policy): a tunnel
    /// idle for `tunnel_idle` is closed; one whose host or server name, or an exchange
    /// whose host, the policy now refuses is aborted (recorded as a hit), so what is
    /// buffered for the client is dropped rather than delivered. Either is aborted when
    /// bytes have waited for the device since `deviceStalledSince` without it taking any,
    /// for `stall_timeout` (docs/proxy.md#stalled-devices): a reset, so that what the
    /// kernel holds for it is dropped at once rather than kept until it reads.
    /// `movedBytes` is every byte the tunnel's relay moved so far, both ways: more than
    /// `OnlineMeter.threshold` of them in a minute of the wall clock is a minute online.
    public mutating func tick(
        _ env: ProxyEnvironment, lastActivity: UInt64, deviceStalledSince: UInt64? = nil, movedBytes: UInt64 = 0
    ) -> [ProxyAction] {
        let judgement: TunnelJudgement
        switch state {
        case .relaying(let tunnel):
            if env.now >= lastActivity &+ env.settings.tunnelIdle { return close() }
            let profile = env.profile(for: client, mac: clientMAC, user: proxyUser)
            // Bytes moved since the last tick (one a second): a minute of the app's budget;
            // enough of them in the minute, a minute online (a keep-alive is not use).
            // Bytes the relay counted since the last tick count even when the tick came late
            // (a loaded loop), which the last activity's time alone would miss.
            let meter = onlineMeter.note(total: movedBytes, wallClock: env.wallClock)
            if meter.moved || lastActivity &+ Self.usageWindow > env.now, let name = tunnel.usedName {
                env.recordUse(of: name, by: profile, online: meter.online)
            }
            judgement = tunnel.judge(env.policy(of: profile))
        case .exchanging(let exchange):
            judgement = exchange.judge(env.policy(for: client, mac: clientMAC, user: proxyUser))
        default:
            return []
        }
        switch judgement {
        case .keep:
            // Judged first, so a connection both stalled and now blocked keeps its hit.
            if let deviceStalledSince, env.now >= deviceStalledSince &+ env.settings.stallTimeout { return abort() }
            return []
        case .close(let hit):
            let record = hit.map { [ProxyAction.record(self.hit($0.0, $0.1, env))] } ?? []
            return record + abort()
        }
    }

    /// docs/proxy.md#local-destinations: the first of `addresses` that is loopback,
    /// unspecified, link-local or the gateway's own (the address the client reached it on
    /// included) and, when they are a name's answer and the name is not under
    /// `rebind_allow`, private-use (DNS rebinding: docs/dns.md#what-answers-may-carry);
    /// none with `allow_local_destinations`.
    func localDestination(
        in addresses: [IPAddress], publicName name: DomainName? = nil, _ env: ProxyEnvironment
    ) -> IPAddress? {
        guard !env.settings.allowLocalDestinations else { return nil }
        let own = env.settings.ownAddresses
        let rebinding = name.map { !env.settings.rebindAllow.covers($0) } ?? false
        return addresses.first { address in
            let address = address.unmapped
            return address.isHostOrLinkScoped || address == arrivedOn.address.unmapped || own.contains(address)
                || (rebinding && address.isPrivateUse)
        }
    }

    static func localRefusal(_ address: IPAddress) -> BlockReason { localRefusal(address.description) }

    static func localRefusal(_ target: String) -> BlockReason {
        BlockReason(Decision(.block, .localDestination, rule: target))
    }

    static let localhost = DomainName(wireLabels: [Array("localhost".utf8)])!

    /// A block found by the resolver (or a local destination): the same refusal a decision
    /// gives, without a hit. `readNext`: after a block page on a keep-alive connection, read
    /// the next request here (false when the caller is already reading heads).
    mutating func refuseAfterLookup(
        _ block: BlockReason, _ pending: Pending, _ env: ProxyEnvironment, readNext: Bool = true
    ) -> [ProxyAction] {
        switch pending.purpose {
        case .tunnel(let tunnel) where tunnel.transparent:
            clientOut.writeBytes(ProxyResponse.accessDeniedAlert)
            return closeAfterResponse(env)
        case .tunnel(let tunnel):
            ProxyResponse.blocked(
                block, host: tunnel.target.host.description, keepAlive: false, childPage: env.settings.childPage,
                to: &clientOut)
            return closeAfterResponse(env)
        case .forward(let exchange):
            let keepAlive = exchange.clientKeepAlive && exchange.retryable
            writeBlockPage(
                block, site: exchange.site, url: exchange.url, method: exchange.method, keepAlive: keepAlive, env)
            if keepAlive {
                return waitForNextRequest(env) + (readNext ? readHeads(env) : [])
            }
            return closeAfterResponse(env)
        }
    }
}
