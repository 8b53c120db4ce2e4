import EventLoop
import SystemIO
import TLS

/// A pooled TCP or DNS-over-TLS connection to one upstream that carries many queries at
/// once: pipelined, each with its own random ID, replies matched by ID in any order
/// (RFC 7766 §6.2.1.1, RFC 7858 §3.3), 2-byte length framing (RFC 1035 §4.2.2). This file
/// holds the queries; `StreamConnection+IO.swift` moves the bytes.
///
/// Life cycle: idle (no socket) → connecting → handshaking (TLS only) → ready, and back to
/// idle when the connection ends, fails, or has been unused for `idleTimeout`. A query
/// enqueued while idle opens it again. When a connection that had already answered ends
/// (a server closing a kept-open connection, RFC 7766 §6.2.3), its unanswered queries are
/// sent once more on a new one; any other failure fails them, and their resolutions move
/// on. A TLS verification failure is such a failure: never a fallback to plain TCP.
///
/// Loop thread only. Owned by the client's pool; the loop also holds it while a socket is
/// registered or a timer pending. Owners of queries are held weakly and never called back
/// from inside `enqueue` or `cancel`.
final class StreamConnection: Selectable, TimerTarget {
    enum Phase: Equatable {
        case idle
        case connecting
        case handshaking
        case ready
    }

    struct Waiter {
        let query: UpstreamQuery
        weak var owner: (any AttemptOwner)?
        let token: UInt64
        /// Already re-sent once after a connection ended.
        var retried = false
    }

    let key: StreamKey
    let loop: EventLoop
    let tlsContext: TLSContext?
    let idleTimeout: Nanoseconds
    weak var client: UpstreamClient?

    var phase = Phase.idle
    var socket: Socket?
    var tls: TLSConnection?
    /// Framed queries not yet taken by the socket (or TLS).
    var outgoing = ByteBuffer()
    /// Plaintext read and not yet cut into replies.
    var incoming = ByteBuffer()
    var waiting: [UInt16: Waiter] = [:]
    /// This socket delivered a reply: its end is worth one retry of what is in flight.
    var answeredOnThisSocket = false
    /// Counts sockets, so a deferred connect failure never ends a newer socket.
    var socketGeneration: UInt64 = 0
    /// Set inside `enqueue`: failures found there reach owners on the next iteration.
    private var callbacksDeferred = false
    private var idleTimer: TimerHandle?

    init(key: StreamKey, client: UpstreamClient) {
        self.key = key
        self.client = client
        loop = client.loop
        tlsContext = client.tls
        idleTimeout = client.idleTimeout
    }

    /// Queues `query` under a fresh random ID unused on this connection, opening the
    /// connection if needed. The outcome reaches `owner` later, tagged with `token`.
    func enqueue(_ query: UpstreamQuery, owner: any AttemptOwner, token: UInt64) -> UInt16 {
        callbacksDeferred = true
        defer { callbacksDeferred = false }
        cancelIdleTimer()
        var id = UpstreamQuery.randomID()
        while waiting[id] != nil { id = UpstreamQuery.randomID() }
        waiting[id] = Waiter(query: query, owner: owner, token: token)
        frame(query.message(id: id))
        switch phase {
        case .idle: open()
        case .ready: pump()
        case .connecting, .handshaking: break  // sent once the connection is up
        }
        return id
    }

    /// Forgets a query (its attempt was given up); a late reply to it is dropped. A
    /// connection still being set up with nobody left waiting is abandoned, so the next
    /// query starts afresh instead of inheriting a stuck connect.
    func cancel(id: UInt16) {
        guard waiting.removeValue(forKey: id) != nil, waiting.isEmpty else { return }
        if phase == .ready { scheduleIdleTimer() } else { teardown() }
    }

    /// Hands a framed reply to the query with its ID, if the reply passes that query's
    /// checks; anything else (unknown ID, late, forged, wrong question) is dropped.
    func deliver(_ reply: [UInt8]) {
        guard reply.count >= 2 else { return }
        let id = UInt16(reply[0]) << 8 | UInt16(reply[1])
        guard let waiter = waiting[id] else { return }
        let verdict = waiter.query.verdict(on: reply, id: id)
        if case .mismatch = verdict { return }
        waiting[id] = nil
        answeredOnThisSocket = true
        if waiting.isEmpty { scheduleIdleTimer() }
        waiter.owner?.attemptReplied(reply, verdict: verdict, token: waiter.token)
    }

    /// The connection ended or failed: retry or fail what was in flight (see the type).
    func lost(_ error: UpstreamError) {
        let mayRetry = answeredOnThisSocket
        teardown()
        var failed: [Waiter] = []
        for (id, var waiter) in waiting {
            if mayRetry, !waiter.retried {
                waiter.retried = true
                waiting[id] = waiter
                frame(waiter.query.message(id: id))
            } else {
                waiting[id] = nil
                failed.append(waiter)
            }
        }
        if !waiting.isEmpty { open() }
        // Last: an owner may enqueue again (on this very connection) from its callback.
        notify(failed, error)
    }

    /// Tells owners their queries failed: now, or on the next loop iteration when inside
    /// `enqueue` (its caller has not even learnt the query's ID yet).
    private func notify(_ failed: [Waiter], _ error: UpstreamError) {
        guard !failed.isEmpty else { return }
        guard callbacksDeferred else {
            for waiter in failed { waiter.owner?.attemptFailed(error, token: waiter.token) }
            return
        }
        loop.scheduleTimer(after: 0) {
            for waiter in failed { waiter.owner?.attemptFailed(error, token: waiter.token) }
        }
    }

    /// Ends the connection at once (client shutdown): close_notify when TLS is up, and
    /// every query still waiting fails.
    func close() {
        if let tls, let socket, phase == .ready {
            tls.shutdown()
            _ = try? tls.sendCiphertext(to: socket)
        }
        teardown()
        let failed = Array(waiting.values)
        waiting.removeAll()
        notify(failed, .unavailable("client shut down"))
    }

    /// Closes the socket and forgets the bytes in both directions; queries stay.
    func teardown() {
        cancelIdleTimer()
        if let socket {
            loop.forget(socket.descriptor)  // closed next: no epoll_ctl needed
            socket.close()
        }
        socket = nil
        tls = nil
        phase = .idle
        outgoing.clear()
        incoming.clear()
        answeredOnThisSocket = false
        socketGeneration &+= 1
    }

    private func frame(_ message: [UInt8]) {
        outgoing.writeInteger(UInt16(message.count))
        outgoing.writeBytes(message)
    }

    // MARK: Idle timer

    private func scheduleIdleTimer() {
        cancelIdleTimer()
        idleTimer = loop.scheduleTimer(at: loop.clock.now() &+ idleTimeout, target: self)
    }

    private func cancelIdleTimer() {
        if let idleTimer { loop.cancelTimer(idleTimer) }
        idleTimer = nil
    }

    /// Idle for `idleTimeout`: close politely (close_notify for TLS).
    func timerFired(tag: UInt64) {
        idleTimer = nil
        if waiting.isEmpty { close() }
    }
}
