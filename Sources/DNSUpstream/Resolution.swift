import DNSWire
import DomainMatch
import EventLoop
import SystemIO

/// Whoever waits for one attempt's outcome. The `token` names the attempt, so an outcome
/// that arrives after the attempt was given up (timed out, superseded) is ignored.
protocol AttemptOwner: AnyObject {
    func attemptReplied(_ reply: [UInt8], verdict: ReplyVerdict, token: UInt64)
    func attemptFailed(_ error: UpstreamError, token: UInt64)
}

/// One question on its way through the upstreams, in order (docs/dns.md#forwarding). Loop thread only.
///
/// Time: each attempt has its own timer at `min(now + timeout, deadline)`, where the
/// deadline is the total budget counted from `resolve`. A UDP reply with TC starts a TCP
/// attempt to the same upstream with a timer of its own (the upstream did answer in time;
/// its full answer needs a second round trip), still within the budget.
///
/// Ownership: the client holds the resolution until it finishes; the loop holds it while
/// its timer is pending; its attempt refers back to it weakly.
final class Resolution: AttemptOwner, TimerTarget {
    let client: UpstreamClient
    let serial: UInt64
    let query: UpstreamQuery
    private let upstreams: [UpstreamSpec]
    private let deadline: Nanoseconds
    private var completion: (([UInt8]?) -> Void)?
    private var next = 0
    private var current: UpstreamSpec?
    private var attempt: Attempt?
    private var timer: TimerHandle?
    /// When the current attempt was sent (monotonic), for the upstream latency metric.
    private var attemptStarted: Nanoseconds = 0
    private var token: UInt64 = 0
    /// Inside `start` (so inside the caller's `resolve`): a completion must wait.
    private var starting = false

    /// What is running now, so it can be given up.
    private enum Attempt {
        case datagram(UDPAttempt)
        case stream(StreamConnection, id: UInt16)
    }

    init(
        client: UpstreamClient, serial: UInt64, query: UpstreamQuery, upstreams: [UpstreamSpec],
        deadline: Nanoseconds, completion: @escaping ([UInt8]?) -> Void
    ) {
        self.client = client
        self.serial = serial
        self.query = query
        self.upstreams = upstreams
        self.deadline = deadline
        self.completion = completion
    }

    func start() {
        starting = true
        tryNextUpstream()
        starting = false
    }

    /// Gives up (client shut down): completion(nil), now.
    func abandon() { finish(nil) }

    /// Starts the next upstream whose attempt can begin; an attempt that fails at once
    /// (no socket, no TLS context) is noted and skipped in the same loop, not recursively.
    private func tryNextUpstream() {
        while completion != nil {
            guard next < upstreams.count, client.loop.clock.now() < deadline else { return finish(nil) }
            let upstream = upstreams[next]
            next += 1
            current = upstream
            guard let error = begin(upstream, overTCP: upstream.transport != .udp) else { return }
            client.noteFailure(of: upstream, error)
        }
    }

    /// Starts one attempt and its timer. Returns the error when it cannot even start.
    private func begin(_ upstream: UpstreamSpec, overTCP: Bool) -> UpstreamError? {
        token &+= 1
        let loop = client.loop
        if overTCP {
            if upstream.transport == .tls, client.tls == nil {
                return .unavailable("no TLS context for \(upstream)")
            }
            let connection = client.connection(for: StreamKey(upstream))
            let id = connection.enqueue(query, owner: self, token: token)
            attempt = .stream(connection, id: id)
        } else {
            do {
                attempt = .datagram(
                    try UDPAttempt(
                        loop: loop, peer: upstream.server.socketAddress, query: query, scratch: client.datagramBuffer,
                        owner: self, token: token))
            } catch {
                return .network(error)
            }
        }
        attemptStarted = loop.clock.now()
        timer = loop.scheduleTimer(at: min(attemptStarted &+ client.timeout, deadline), target: self, tag: token)
        return nil
    }

    func attemptReplied(_ reply: [UInt8], verdict: ReplyVerdict, token: UInt64) {
        guard token == self.token, completion != nil, let upstream = current else { return }
        switch verdict {
        case .answer:
            client.noteAnswer(from: upstream, after: client.loop.clock.now() &- attemptStarted)
            finish(reply)
        case .truncated where isStream:
            // TC over TCP has nowhere further to go: it is the answer.
            client.noteAnswer(from: upstream, after: client.loop.clock.now() &- attemptStarted)
            finish(reply)
        case .truncated:
            endAttempt()
            if let error = begin(upstream, overTCP: true) { attemptFailed(error, token: self.token) }
        case .failover(let rcode):
            attemptFailed(.rcode(rcode), token: token)
        case .mismatch:
            break  // the attempt drops these itself; nothing to do
        }
    }

    func attemptFailed(_ error: UpstreamError, token: UInt64) {
        guard token == self.token, completion != nil, let upstream = current else { return }
        endAttempt()
        client.noteFailure(of: upstream, error)
        tryNextUpstream()
    }

    func timerFired(tag: UInt64) {
        guard tag == token else { return }
        timer = nil
        attemptFailed(.timedOut, token: tag)
    }

    private var isStream: Bool {
        if case .stream = attempt { return true }
        return false
    }

    /// Gives up the running attempt and its timer; later outcomes carry a stale token.
    private func endAttempt() {
        token &+= 1
        switch attempt {
        case .datagram(let datagram): datagram.close()
        case .stream(let connection, let id): connection.cancel(id: id)
        case nil: break
        }
        attempt = nil
        if let timer { client.loop.cancelTimer(timer) }
        timer = nil
    }

    private func finish(_ reply: [UInt8]?) {
        guard let completion else { return }
        endAttempt()
        self.completion = nil
        client.resolutionEnded(serial)
        if starting {
            // Every upstream failed at once (no sockets left?): the caller of `resolve`
            // still must not see its completion run inside its own call.
            client.loop.scheduleTimer(after: 0) { completion(reply) }
        } else {
            completion(reply)
        }
    }
}
