import DNSUpstream
import DNSWire
import DomainMatch
import EventLoop
import Glibc
import Synchronization
import SystemIO
import TLS
import TestSupport

/// One resolution's outcome as the test sees it.
struct Outcome: Sendable {
    let reply: [UInt8]?
    /// From `resolve` to the completion, on the loop's clock.
    let elapsed: Nanoseconds

    /// The first A record of the answer, as text ("192.0.2.1").
    var address: String? {
        guard let reply, let message = try? DNSMessage.parse(reply) else { return nil }
        return message.answers.lazy.compactMap(\.rdata.ipv4).first?.description
    }

    var rcode: DNSRcode? { reply.flatMap { try? DNSMessage.parse($0) }?.rcode }
}

/// A client on a loop of its own (plus a second loop for fake servers), torn down by
/// `withHarness` whatever happens.
final class Harness: Sendable {
    let group: EventLoopGroup
    let client: UpstreamClient
    /// What the client's log hook was told, in order.
    let events: Shared<[UpstreamEvent]>
    var loop: EventLoop { group.loops[0] }
    /// For fake upstreams, so they do not share the client's thread.
    var serverLoop: EventLoop { group.loops[1] }

    init(group: EventLoopGroup, client: UpstreamClient, events: Shared<[UpstreamEvent]>) {
        self.group = group
        self.client = client
        self.events = events
    }

    /// Reads a client property on its loop.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (UpstreamClient) -> T) throws -> T {
        let client = client
        return try loop.runSync(timeout: testTimeout) { body(client) }
    }

    /// Resolves `name` and waits (bounded) for the completion.
    func resolve(
        _ name: String, type: DNSType = .a, dnssecOK: Bool = false, checkingDisabled: Bool = false,
        upstreams: [UpstreamSpec]? = nil
    ) throws -> Outcome {
        try resolveAll(
            [name], type: type, dnssecOK: dnssecOK, checkingDisabled: checkingDisabled, upstreams: upstreams)[0]
    }

    /// Starts every resolution in one loop iteration (so they are all in flight together)
    /// and waits for all of them; outcomes in the order of `names`.
    func resolveAll(
        _ names: [String], type: DNSType = .a, dnssecOK: Bool = false, checkingDisabled: Bool = false,
        upstreams: [UpstreamSpec]? = nil
    ) throws -> [Outcome] {
        let questions = try names.map { name throws in DNSQuestion(name: try DNSName(name), type: type) }
        let outcomes = Shared<[Int: Outcome]>([:])
        let client = client
        let clock = loop.clock
        loop.execute {
            for (index, question) in questions.enumerated() {
                let start = clock.now()
                client.resolve(question, dnssecOK: dnssecOK, checkingDisabled: checkingDisabled, upstreams: upstreams) {
                    reply in
                    outcomes.update { $0[index] = Outcome(reply: reply, elapsed: clock.now() - start) }
                }
            }
        }
        guard waitUntil({ outcomes.value.count == names.count }) else { throw HarnessError.noCompletion }
        let results = outcomes.value
        return names.indices.map { results[$0]! }
    }

    enum HarnessError: Error { case noCompletion }
}

/// Runs `body` with a client for `upstreams` and always shuts it and its loops down.
func withHarness<R>(
    upstreams: [UpstreamSpec] = [], timeout: Nanoseconds = 800_000_000, totalBudget: Nanoseconds = 2_000_000_000,
    tls: TLSContext? = nil, maxInFlight: Int = 4096, idleTimeout: Nanoseconds = 10_000_000_000,
    _ body: (Harness) throws -> R
) throws -> R {
    let group = try EventLoopGroup(loopCount: 2, name: "upstream-test", clock: SystemClock())
    defer { group.shutdownGracefully() }
    let events = Shared<[UpstreamEvent]>([])
    let client = try group.loops[0].runSync(timeout: testTimeout) {
        let client = try UpstreamClient(
            loop: group.loops[0], upstreams: upstreams, timeout: timeout, totalBudget: totalBudget, tls: tls,
            maxInFlight: maxInFlight, idleTimeout: idleTimeout)
        client.onEvent = { event in events.update { $0.append(event) } }
        return client
    }
    defer { try? group.loops[0].runSync(timeout: testTimeout) { client.shutdown() } }
    return try body(Harness(group: group, client: client, events: events))
}

func upstream(_ text: String) -> UpstreamSpec { UpstreamSpec(text)! }

/// A loopback port nobody listens on (UDP or TCP) right now: bound, read, closed.
func closedPort() throws -> UInt16 {
    let socket = try Socket.udp(bindingTo: try SocketAddress("127.0.0.1:0"))
    defer { socket.close() }
    return socket.address!.port
}
