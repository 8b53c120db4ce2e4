import DNSUpstream
import DNSWire
import DomainMatch
import EventLoop
import Glibc
import Neighbours
import Policy
import Synchronization
import SystemIO

/// Forwards one question to upstream resolvers and calls back on the loop thread, once,
/// with the reply or nil when every upstream failed (docs/dns.md#forwarding). `DNSUpstream`'s client
/// is the real one; tests may give their own.
public protocol UpstreamResolving: AnyObject {
    func resolve(
        _ question: DNSQuestion, dnssecOK: Bool, checkingDisabled: Bool, upstreams: [UpstreamSpec]?,
        completion: @escaping ([UInt8]?) -> Void)
}

/// Carries out a pipeline step on one loop: a reply goes to `send`; a resolution goes to
/// the upstream, with the serve-stale timer of RFC 8767 (1.8 s) when a stale copy exists.
/// Loop-confined; one per loop, shared by that loop's UDP and TCP servers.
public final class QueryDriver {
    public let loop: EventLoop
    public let pipeline: QueryPipeline
    public let upstream: any UpstreamResolving
    /// This loop's reusable storage for reading questions in place.
    let scratch = QueryScratch()
    /// Queries waiting for an upstream on this loop (for draining on SIGTERM).
    public let inFlight: Atomic<Int>
    /// This loop's copy of the pipeline's snapshot, read without a lock; `QueryPipeline`
    /// owners set it on the loop (through `execute`) when they publish a new one.
    public var snapshot: ProxySnapshot
    /// This loop's view of the kernel's neighbour table (MAC by address); set on the loop
    /// thread by whoever starts the loop.
    public var neighbours: NeighbourCache?
    /// With `lan_interfaces` set, the interfaces this loop's listeners serve
    /// (docs/network.md#who-is-served); set on the loop thread before any listener is
    /// made, since a listener asks the kernel for arrival interfaces when it is made.
    public var arrivalFilter: ArrivalFilter?
    static let staleAfter: Nanoseconds = 1_800_000_000
    /// The longest query taken, over UDP and TCP alike (docs/dns.md#hostile-input): room for
    /// any question with its OPT record, padding (RFC 8467 pads to 128-byte blocks) and a
    /// TSIG. It is what a datagram slot holds, and over TCP it bounds what a connection
    /// buffers for a message still arriving: at `tcp_max` connections 8 MiB, where the
    /// 65,535 a length prefix can name made it 128 MiB.
    public static let maxQueryBytes = 4096

    public init(loop: EventLoop, pipeline: QueryPipeline, upstream: any UpstreamResolving) {
        self.loop = loop
        self.pipeline = pipeline
        self.upstream = upstream
        inFlight = Atomic(0)
        snapshot = pipeline.snapshot
    }

    /// The clocks of this instant, both from the loop's clock: monotonic for cache ages and
    /// timers, wall for the time rules (downtime, schedule) and hit timestamps.
    public func now() -> Now {
        Now(monotonicMilliseconds: Int64(loop.clock.now() / 1_000_000), unixSeconds: loop.clock.wall().unixSeconds)
    }

    /// Handles a query packet end to end: `send` gets the answer, or `dropped` is called
    /// when there is none (a header that cannot be read, a response): one of them, once.
    public func handle(
        _ packet: [UInt8], from client: IPAddress, overUDP: Bool, dropped: (() -> Void)? = nil,
        send: @escaping ([UInt8]) -> Void
    ) {
        let step = pipeline.receive(
            packet, from: client, mac: neighbourMAC(for: client), overUDP: overUDP, now: now(), snapshot: snapshot)
        if case .drop = step { dropped?() }
        carryOut(step, typeRow: DNSMetrics.typeRow(packet), send: send)
    }

    /// Handles a datagram where it lies in its receive slot (the UDP server's path): an
    /// answer made on the spot goes to `place`, which writes it into a send slot and says
    /// whether it could; when it could not, and for everything else, `sender` is asked for
    /// the closure `handle(_:from:overUDP:dropped:send:)` takes. Neither is kept, so a
    /// cached or blocked answer needs no closure of its own.
    public func handle(
        datagram packet: UnsafeRawBufferPointer, from client: IPAddress, place: (Answer) -> Bool,
        sender: () -> ([UInt8]) -> Void
    ) {
        let typeRow = DNSMetrics.typeRow(packet)
        let outcome = pipeline.receive(
            datagram: packet, from: client, mac: neighbourMAC(for: client), now: now(), snapshot: snapshot,
            scratch: scratch)
        switch outcome {
        case .answer(let answer):
            if place(answer) {
                pipeline.metrics.answered(typeRow, rcode: answer.rcode)
                return
            }
            carryOut(.reply(answer.bytes), typeRow: typeRow, send: sender())
        case .step(.drop): carryOut(.drop, typeRow: typeRow) { _ in }
        case .step(let step): carryOut(step, typeRow: typeRow, send: sender())
        }
    }

    /// The client's MAC address when the neighbour table knows it (from this loop's cache:
    /// no system call while it is fresh), whether or not a profile is chosen by MAC: it
    /// chooses the profile (a MAC no profile lists changes nothing), it is what proves a
    /// UDP source for `status` (`QueryPipeline.sighting`), and the HTTP proxy's caps count
    /// a device by it. Nil on loopback, which has no neighbours, and when this loop has no
    /// neighbour cache.
    public func neighbourMAC(for client: IPAddress) -> MACAddress? {
        guard !client.isLoopback, let neighbours else { return nil }
        return neighbours.mac(for: client, now: loop.clock.now())
    }

    /// Every query ends here exactly once with a reply or a drop, which is when it is
    /// counted (`typeRow`: its question type's row in `DNSMetrics`).
    private func carryOut(_ step: QueryPipeline.Step, typeRow: Int, send: @escaping ([UInt8]) -> Void) {
        switch step {
        case .drop:
            pipeline.metrics.dropped(typeRow)
        case .reply(let bytes):
            pipeline.metrics.answered(typeRow, reply: bytes)
            send(bytes)
        case .resolve(let pending): resolve(pending, typeRow: typeRow, send: send)
        }
    }

    private func resolve(_ pending: PendingQuery, typeRow: Int, send: @escaping ([UInt8]) -> Void) {
        let answered = Answered()
        inFlight.add(1, ordering: .relaxed)
        var staleTimer: TimerHandle?
        if pending.stale != nil {
            staleTimer = loop.scheduleTimer(after: Self.staleAfter) { [weak self] in
                guard let self, !answered.done,
                    let step = self.pipeline.staleAnswer(pending, now: self.now(), snapshot: self.snapshot)
                else { return }
                answered.done = true
                self.pipeline.metrics.staleAnswers.add()
                self.carryOut(step, typeRow: typeRow, send: send)
            }
        }
        let servers = snapshot.servers(for: pending.localZone)
        upstream.resolve(
            pending.upstreamQuestion, dnssecOK: pending.key.dnssecOK,
            checkingDisabled: pending.key.checkingDisabled, upstreams: servers
        ) { [weak self] reply in
            guard let self else { return }
            self.inFlight.subtract(1, ordering: .relaxed)
            if let staleTimer { _ = self.loop.cancelTimer(staleTimer) }
            // Stored in the cache even when the stale copy already went out.
            let step = self.pipeline.complete(pending, reply: reply, now: self.now(), snapshot: self.snapshot)
            guard !answered.done else { return }
            answered.done = true
            self.carryOut(step, typeRow: typeRow, send: send)
        }
    }

    /// Whether a query was answered (by the upstream or from the stale copy).
    private final class Answered {
        var done = false
    }
}

extension QueryDriver {
    /// The HTTP proxy's typed lookup of a host it has already decided for `profile`
    /// (`QueryPipeline.lookUpHost`), on this loop with this loop's snapshot and upstream
    /// client; `completion` runs on the loop thread, once, possibly before this returns
    /// (a cached answer).
    public func lookUpHost(
        _ name: DomainName, type: DNSType, profile: Profile, inspect: Bool, client: IPAddress,
        completion: @escaping (ResolvedHost) -> Void
    ) {
        let step = pipeline.lookUpHost(
            name, type: type, profile: profile, inspect: inspect, client: client, now: now(), snapshot: snapshot)
        guard case .resolve(let resolution) = step else {
            if case .done(let result) = step { completion(result) }
            return
        }
        inFlight.add(1, ordering: .relaxed)
        let servers = snapshot.servers(for: resolution.localZone)
        upstream.resolve(resolution.question, dnssecOK: false, checkingDisabled: false, upstreams: servers) {
            [weak self] reply in
            guard let self else { return }
            self.inFlight.subtract(1, ordering: .relaxed)
            completion(self.pipeline.finishHost(resolution, reply: reply, now: self.now(), snapshot: self.snapshot))
        }
    }
}
