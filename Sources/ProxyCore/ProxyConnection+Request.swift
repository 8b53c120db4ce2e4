import Bytes
import HTTP1
import Policy

/// Reading request heads and deciding what each asks for: CONNECT (docs/proxy.md#connect), a proxy
/// request (docs/proxy.md#plain-http), the PAC file (docs/proxy.md#the-pac-file); bad input refused with its status (docs/proxy.md#bad-input-and-limits).
extension ProxyConnection {
    /// Bytes were appended to `clientIn`.
    public mutating func clientInput(_ env: ProxyEnvironment) -> [ProxyAction] {
        switch state {
        case .readingHead: return readHeads(env)
        case .inspecting(let tunnel): return inspect(tunnel, env)
        case .exchanging: return passRequestBody(env)
        case .closing:
            clientIn.clear()
            return []
        case .authenticating, .resolving, .connecting, .relaying, .closed:
            return []  // pipelined input waits for its turn
        }
    }

    /// The client will send no more (EOF).
    public mutating func clientClosed(_ env: ProxyEnvironment) -> [ProxyAction] {
        switch state {
        case .inspecting(let tunnel):
            return startRelay(tunnel)  // the relay reads the EOF again and half-closes the origin
        case .exchanging(var exchange) where exchange.requestBody.isComplete:
            exchange.clientKeepAlive = false
            state = .exchanging(exchange)
            return []
        case .relaying:
            return []
        default:
            return close()
        }
    }

    /// Handles every complete head in `clientIn` while the connection reads heads
    /// (pipelined requests the proxy answers itself are answered in turn).
    mutating func readHeads(_ env: ProxyEnvironment) -> [ProxyAction] {
        var actions: [ProxyAction] = []
        while case .readingHead = state {
            // RFC 9112 §2.2: empty lines before a request line are ignored.
            while let byte = clientIn.getInteger(at: clientIn.readerIndex, as: UInt8.self), byte == 0x0D || byte == 0x0A
            {
                clientIn.moveReaderIndex(forwardBy: 1)
                headScanner.reset()
            }
            guard clientIn.readableBytes > 0 else {
                clientIn.clear()
                return actions
            }
            if betweenRequests {
                // The next request has begun: it gets the head timeout from now.
                betweenRequests = false
                deadline = env.now &+ ProxyLimits.headTimeout
            }
            var scanner = headScanner
            let lineSeen = headScanner.startLineEnd != nil
            let length: Int?
            do {
                length = try clientIn.withUnsafeReadableBytes { bytes throws(HTTP1Error) in try scanner.scan(bytes) }
            } catch {
                return actions + refuse(.malformed(error), env)
            }
            headScanner = scanner
            if length == nil, !lineSeen, let end = scanner.startLineEnd {
                // The request line is in: one that can never be a request is refused now,
                // not after the head timeout (an HTTP/0.9 client sends nothing more).
                do {
                    _ = try clientIn.withUnsafeReadableBytes { bytes throws(HTTP1Error) in
                        let line = Array(bytes[0..<end]).dropLast(end >= 2 && bytes[end - 2] == 0x0D ? 2 : 1)
                        return try RequestHead.requestLine(line)
                    }
                } catch {
                    return actions + refuse(.malformed(error), env)
                }
            }
            guard let length, let bytes = clientIn.readBytes(length: length) else { return actions }
            clientIn.discardReadBytes()
            do throws(ProxyError) {
                let head: RequestHead
                do { head = try RequestHead(bytes) } catch { throw ProxyError.malformed(error) }
                actions += try handle(head, env)
            } catch {
                return actions + refuse(error, env)
            }
        }
        return actions
    }

    mutating func refuse(_ error: ProxyError, _ env: ProxyEnvironment) -> [ProxyAction] {
        fail(error.status, error.description, env)
    }

    /// One request: which kind, from its method and target form (RFC 9112 §3.2).
    mutating func handle(_ head: RequestHead, _ env: ProxyEnvironment) throws(ProxyError) -> [ProxyAction] {
        // Redirected by the firewall: an origin-form request to the original destination,
        // no login (the client does not know there is a proxy).
        if redirectedTo != nil { return try forward(head, env) }
        // The PAC file is for anyone who may use the proxy at all: no login.
        if !head.isConnect, head.target.hasPrefix("/") { return serveDirect(head, env) }
        if let refused = authenticate(head, env) { return refused }
        if head.isConnect { return try tunnel(head, env) }
        return try forward(head, env)
    }

    /// CONNECT host:port (docs/proxy.md#connect): refused with 403 and `X-Phosra-Block`, the upstream
    /// never contacted; or resolved (the rewrite's target for safe search) and connected.
    mutating func tunnel(_ head: RequestHead, _ env: ProxyEnvironment) throws(ProxyError) -> [ProxyAction] {
        let target = try ProxyTarget.connect(head.target)
        let profile = env.profile(for: client, mac: clientMAC, user: proxyUser)
        profile.activity.recordQuery(from: SeenClient(address: client, mac: deviceMAC))
        var actions = dropIdleUpstream()
        switch env.policy(of: profile).verdict(target, isConnect: true) {
        case .refuse(let block):
            ProxyResponse.blocked(
                block, host: target.host.description, keepAlive: false, childPage: env.settings.childPage,
                to: &clientOut)
            actions.append(
                .record(
                    hit(target.host.description, block.decision, env)))
            return actions + closeAfterResponse(env)
        case .resolve(let name, let decision):
            let rewritten = decision.action == .rewrite ? decision.target : nil
            if let rewritten { profile.activity.recordRewrite(target: rewritten) }
            if case .name(let asked) = target.host { env.recordUse(of: asked, by: profile) }
            let tunnel = Tunnel(target: target, rewriteTarget: rewritten)
            let origin = Origin(destination: .name(name), port: target.port)
            let pending = Pending(
                purpose: .tunnel(tunnel), origin: origin, profile: profile,
                inspect: profile.rules.inspectsAnswer(after: decision))
            return actions + open(pending, env)
        case .address(let address, _):
            let origin = Origin(destination: .address(address), port: target.port)
            return actions
                + open(
                    Pending(
                        purpose: .tunnel(Tunnel(target: target, rewriteTarget: nil)), origin: origin, profile: profile),
                    env)
        }
    }

    /// An origin-form request to the proxy itself: the PAC file (docs/proxy.md#the-pac-file), else 404;
    /// 400 for HTTP/1.1 without `Host` (RFC 9112 §3.2: the target alone names no host).
    mutating func serveDirect(_ head: RequestHead, _ env: ProxyEnvironment) -> [ProxyAction] {
        let keepAlive = head.keepAlive && (try? head.bodyFraming()) == .length(0)
        if head.minorVersion >= 1, head.fields.first("Host") == nil {
            ProxyResponse.error(400, "an HTTP/1.1 request needs a Host header", to: &clientOut)
            return closeAfterResponse(env)
        }
        if PAC.isPACPath(head.target), head.method == "GET" || head.method == "HEAD" {
            ProxyResponse.pac(for: arrivedOn, keepAlive: keepAlive, headOnly: head.method == "HEAD", to: &clientOut)
        } else {
            ProxyResponse.error(
                404, "this is a proxy; ask for http://… URLs, CONNECT or /proxy.pac", keepAlive: keepAlive,
                to: &clientOut)
        }
        return keepAlive ? waitForNextRequest(env) : closeAfterResponse(env)
    }

    /// Back to reading heads after a finished exchange; the caller reads any pipelined one.
    mutating func waitForNextRequest(_ env: ProxyEnvironment) -> [ProxyAction] {
        state = .readingHead
        betweenRequests = true
        headScanner.reset()
        deadline = env.now &+ ProxyLimits.keepAliveIdle
        return []
    }

    /// A plain-HTTP connection left open from an earlier request, closed before the
    /// connection goes elsewhere.
    mutating func dropIdleUpstream() -> [ProxyAction] {
        guard upstream != nil else { return [] }
        upstream = nil
        // Bytes for or from that connection must never reach the next one.
        upstreamIn.clear()
        upstreamOut.clear()
        return [.dropUpstream]
    }
}
