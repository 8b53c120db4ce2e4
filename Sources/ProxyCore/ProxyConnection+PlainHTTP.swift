import Bytes
import HTTP1
import Policy
import Zoneinfo

/// Plain HTTP (docs/proxy.md#plain-http): every request on a keep-alive connection decided on its URL
/// host; a block answered with the block page; an allowed request forwarded with its
/// body, and the response passed back, both framed as they came (Content-Length,
/// chunked, or until the origin closes) — except a chunked response to an HTTP/1.0
/// client, which gets the content ended by a close — the upstream connection kept for
/// the next request to the same origin.
extension ProxyConnection {
    mutating func forward(_ head: RequestHead, _ env: ProxyEnvironment) throws(ProxyError) -> [ProxyAction] {
        let target: ProxyTarget
        do {
            target = try redirectedTo == nil ? ProxyTarget.absolute(head.target) : Self.redirectedTarget(head)
        } catch .invalidHost(let host) {
            let keepAlive = head.keepAlive && (try? head.bodyFraming()) == .length(0)
            ProxyResponse.invalidHost(
                host, url: head.target, gatewayName: env.settings.gatewayName, keepAlive: keepAlive,
                to: &clientOut)
            return keepAlive ? waitForNextRequest(env) : closeAfterResponse(env)
        }
        let framing: BodyFraming
        do { framing = try head.bodyFraming() } catch { throw .malformed(error) }
        if ForwardedHead.isLoop(head) { throw .loop }
        if head.method == "OPTIONS" || head.method == "TRACE", head.maxForwards == 0 {
            // RFC 9110 §7.6.2: the request goes no further; this proxy is its final recipient.
            let keepAlive = head.keepAlive && framing == .length(0)
            ProxyResponse.finalRecipient(head, keepAlive: keepAlive, to: &clientOut)
            return keepAlive ? waitForNextRequest(env) : closeAfterResponse(env)
        }
        let profile = env.profile(for: client, mac: clientMAC, user: proxyUser)
        if redirectedTo == nil, let route = env.settings.childPageRoute, target.port == route.port,
            case .name(let name) = target.host, name == route.host
        {
            // The gateway's own child's page: no decision, no hit, no minute; who asks
            // goes with the request.
            let child = ChildIdentity(address: client, mac: deviceMAC, profile: profile.name)
            var exchange = Exchange(
                method: head.method, target: target, site: route.host.description, url: head.target,
                head: ForwardedHead.request(head, target: target, child: child),
                requestBody: BodyTracker(framing, bareLineFeeds: false), clientKeepAlive: head.keepAlive,
                clientIsHTTP10: head.minorVersion == 0,
                origin: Origin(destination: .childPage(route.address), port: route.port),
                retryable: framing == .length(0), profile: profile)
            exchange.inspect = false
            return start(exchange, env)
        }
        profile.activity.recordQuery(from: SeenClient(address: client, mac: deviceMAC))
        // A proxy request goes only to the web's ports (the firewall chose a redirected one's).
        if redirectedTo == nil, !env.settings.httpPorts.contains(target.port) {
            let keepAlive = head.keepAlive && framing == .length(0)
            let block = BlockReason(Decision(.block, .port, rule: "\(target.port)"))
            writeBlockPage(
                block, site: target.host.description, url: head.target, method: head.method, keepAlive: keepAlive, env)
            return [.record(hit(target.host.description, block.decision, env))]
                + (keepAlive ? waitForNextRequest(env) : closeAfterResponse(env))
        }
        let destination: Origin.Destination
        var inspect = true
        switch env.policy(of: profile).verdict(target, isConnect: false) {
        case .refuse(let block):
            let keepAlive = head.keepAlive && framing == .length(0)
            writeBlockPage(
                block, site: target.host.description, url: head.target, method: head.method, keepAlive: keepAlive, env)
            let record = ProxyAction.record(
                hit(target.host.description, block.decision, env))
            return [record] + (keepAlive ? waitForNextRequest(env) : closeAfterResponse(env))
        case .resolve(let name, let decision):
            if decision.action == .rewrite, let rewritten = decision.target {
                profile.activity.recordRewrite(target: rewritten)
            }
            if case .name(let asked) = target.host { env.recordUse(of: asked, by: profile) }
            destination = .name(name)
            inspect = profile.rules.inspectsAnswer(after: decision)
        case .address(let address, _):
            destination = .address(address)
        }
        var exchange = Exchange(
            method: head.method, target: target, site: target.host.description, url: head.target,
            head: ForwardedHead.request(head, target: target), requestBody: BodyTracker(framing, bareLineFeeds: false),
            clientKeepAlive: head.keepAlive, clientIsHTTP10: head.minorVersion == 0,
            origin: redirectedTo.map { redirectedOrigin(destination, port: $0.port, env) }
                ?? Origin(destination: destination, port: target.port),
            retryable: framing == .length(0), profile: profile)
        exchange.inspect = inspect
        return start(exchange, env)
    }

    /// Sends `exchange` on the kept connection to its origin, or opens one.
    mutating func start(_ exchange: Exchange, _ env: ProxyEnvironment) -> [ProxyAction] {
        if upstream == exchange.origin {
            var reused = exchange
            reused.reusedConnection = true
            return send(reused, env)
        }
        return dropIdleUpstream() + open(exchange.pending, env)
    }

    /// The connection to the origin is open: the head goes out, then the body as it comes.
    mutating func send(_ exchange: Exchange, _ env: ProxyEnvironment) -> [ProxyAction] {
        var exchange = exchange
        upstreamOut.writeBuffer(exchange.head)
        if !(exchange.reusedConnection && exchange.retryable) { exchange.head = ByteBuffer(capacity: 0) }
        upstream = exchange.origin
        state = .exchanging(exchange)
        deadline = env.now &+ env.settings.tunnelIdle
        return passRequestBody(env)
    }

    /// Moves request-body bytes from `clientIn` to `upstreamOut`.
    mutating func passRequestBody(_ env: ProxyEnvironment) -> [ProxyAction] {
        guard case .exchanging(var exchange) = state else { return [] }
        if !exchange.requestBody.isComplete, clientIn.readableBytes > 0 {
            do {
                let used = try clientIn.withUnsafeReadableBytes { bytes throws(HTTP1Error) in
                    try exchange.requestBody.consume(bytes)
                }
                _ = clientIn.withUnsafeReadableBytes {
                    upstreamOut.writeBytes(UnsafeRawBufferPointer(rebasing: $0[0..<used]))
                }
                clientIn.moveReaderIndex(forwardBy: used)
                clientIn.discardReadBytes()
            } catch {
                // A malformed chunked body: refused while no response has begun, else the
                // connection ends (a 400 cannot follow a response already under way).
                guard case .head = exchange.response, clientOut.readableBytes == 0 else { return close() }
                return fail(400, error.description, env)
            }
            deadline = env.now &+ env.settings.tunnelIdle
        }
        state = .exchanging(exchange)
        return finishIfDone(env)
    }

    /// Bytes were appended to `upstreamIn`.
    public mutating func upstreamInput(_ env: ProxyEnvironment) -> [ProxyAction] {
        guard case .exchanging = state else {
            // An idle origin speaking out of turn is not trusted with the next request.
            upstreamIn.clear()
            return dropIdleUpstream()
        }
        deadline = env.now &+ env.settings.tunnelIdle
        while case .exchanging(var exchange) = state, upstreamIn.readableBytes > 0 {
            switch exchange.response {
            case .head:
                // Searched from the start on each read: a response head rarely takes two.
                var scanner = HeadScanner(limit: ProxyLimits.headerBytes)
                let end: Int?
                do {
                    end = try upstreamIn.withUnsafeReadableBytes { bytes throws(HTTP1Error) in try scanner.scan(bytes) }
                } catch {
                    return fail(502, "the origin's response header is over \(ProxyLimits.headerBytes) bytes", env)
                }
                guard let end else { return [] }
                let bytes = upstreamIn.readBytes(length: end) ?? []
                upstreamIn.discardReadBytes()
                guard let head = try? ResponseHead(bytes), head.status != 101,
                    let framing = try? head.bodyFraming(requestMethod: exchange.method)
                else {
                    return fail(502, "the origin sent a malformed response", env)
                }
                exchange.reusedConnection = false
                exchange.head = ByteBuffer(capacity: 0)
                if head.isInformational {
                    ForwardedHead.response(
                        head, close: false, keepAliveFor10: false, dropTransferEncoding: false,
                        to: &clientOut)
                    state = .exchanging(exchange)
                    continue
                }
                // Both Transfer-Encoding and Content-Length (RFC 9112 §6.3): read by the former,
                // and that connection is not trusted with another request.
                exchange.upstreamKeepAlive = head.keepAlive && framing != .untilClose && !head.hasConflictingFraming
                exchange.dechunk = framing == .chunked && exchange.clientIsHTTP10
                // The client's connection survives only if it can tell this response's end
                // and the request has been read to its end.
                let keep =
                    exchange.clientKeepAlive && framing != .untilClose && !exchange.dechunk
                    && exchange.requestBody.isComplete
                ForwardedHead.response(
                    head, close: !keep, keepAliveFor10: keep, dropTransferEncoding: exchange.dechunk,
                    to: &clientOut)
                exchange.clientKeepAlive = keep
                let tracker = BodyTracker(framing)
                exchange.response = tracker.isComplete ? .done : .body(tracker)
            case .body(var tracker):
                do {
                    let used: Int
                    if exchange.dechunk {
                        used = try upstreamIn.withUnsafeReadableBytes { bytes throws(HTTP1Error) in
                            try tracker.consume(bytes) { _ = clientOut.writeBytes($0) }
                        }
                    } else {
                        used = try upstreamIn.withUnsafeReadableBytes { bytes throws(HTTP1Error) in
                            try tracker.consume(bytes)
                        }
                        _ = upstreamIn.withUnsafeReadableBytes {
                            clientOut.writeBytes(UnsafeRawBufferPointer(rebasing: $0[0..<used]))
                        }
                    }
                    upstreamIn.moveReaderIndex(forwardBy: used)
                    upstreamIn.discardReadBytes()
                } catch {
                    return closeAfterResponse(env)  // what was passed on stays; the client sees the end
                }
                exchange.response = tracker.isComplete ? .done : .body(tracker)
            case .done:
                // Bytes after the response: this origin connection is not reused.
                exchange.upstreamKeepAlive = false
                upstreamIn.clear()
            }
            state = .exchanging(exchange)
        }
        return finishIfDone(env)
    }

    /// The origin closed its connection.
    public mutating func upstreamClosed(_ env: ProxyEnvironment) -> [ProxyAction] {
        guard case .exchanging(var exchange) = state else { return dropIdleUpstream() }
        switch exchange.response {
        case .head where exchange.reusedConnection && exchange.retryable:
            // A kept connection the origin had closed meanwhile: once more on a new one.
            upstream = nil
            upstreamIn.clear()
            upstreamOut.clear()
            exchange.reusedConnection = false
            return [.dropUpstream] + open(exchange.pending, env)
        case .head:
            return fail(502, "the origin closed the connection without a response", env)
        case .body(let tracker) where tracker.isUntilClose:
            exchange.response = .done
            exchange.upstreamKeepAlive = false
            state = .exchanging(exchange)
            return finishIfDone(env)
        case .body:
            return closeAfterResponse(env)  // truncated: the client must not wait for more
        case .done:
            exchange.upstreamKeepAlive = false
            state = .exchanging(exchange)
            return finishIfDone(env)
        }
    }

    /// After the response's last byte: keep or drop the origin connection, then the next
    /// request (keep-alive) or the end.
    mutating func finishIfDone(_ env: ProxyEnvironment) -> [ProxyAction] {
        guard case .exchanging(let exchange) = state, exchange.responseDone else { return [] }
        // A response that ended before its request did leaves both streams mid-message.
        guard exchange.requestBody.isComplete, exchange.clientKeepAlive else { return closeAfterResponse(env) }
        var actions: [ProxyAction] = []
        if !exchange.upstreamKeepAlive {
            upstream = nil
            upstreamIn.clear()
            actions.append(.dropUpstream)
        }
        return actions + waitForNextRequest(env) + readHeads(env)
    }

    /// The block page (docs/proxy.md#plain-http), with when the cutoff ends for a downtime or schedule block.
    mutating func writeBlockPage(
        _ block: BlockReason, site: String, url: String, method: String, keepAlive: Bool,
        _ env: ProxyEnvironment
    ) {
        let policy = env.policy(for: client, mac: clientMAC, user: proxyUser)
        let zone = policy.engine.zone
        var end: LocalDateTime??
        if block.isCutoff {
            end = .some(policy.rules.time.cutoffEnd(from: env.wallClock, zone: zone).map { zone.localDateTime(at: $0) })
        }
        let page = BlockPage(
            site: site, url: url, block: block, now: policy.local, cutoffEnd: end,
            zoneName: zone.abbreviation(at: env.wallClock), gatewayName: env.settings.gatewayName,
            askURL: env.settings.childPage.flatMap { block.askURL(base: $0, site: site) })
        ProxyResponse.blockPage(page, keepAlive: keepAlive, headOnly: method == "HEAD", to: &clientOut)
    }
}
