import DNSProxy
import DNSUpstream
import DNSWire
import DomainMatch
import EventLoop
import Glibc
import Locks
import SystemIO

/// Names of the LAN's devices by reverse DNS (docs/parent-page.md#pages), for a device the
/// lease file does not name: a PTR question for its address, over UDP, asked of the server
/// `local_forward` names for the reverse zone (a home router that names its DHCP clients),
/// else of the first upstream that is not DNS-over-TLS when it is on the LAN or this host
/// (a private, loopback or link-local address: a public resolver knows no LAN names, and
/// is not told the LAN's addresses) — never of the gateway itself, which answers the
/// private reverse zones locally. Asked on a thread of its own, started by the first
/// question, so the page never waits: a name found shows from the page's next view. A
/// name is kept an hour, "none" ten minutes.
package final class ReverseNames: Sendable {
    static let capacity = 4_096
    static let keepSeconds: Int64 = 3_600
    static let keepNoneSeconds: Int64 = 600
    static let timeout: Nanoseconds = 1_000_000_000

    /// Servers by the reverse zone they answer for (nil: any address).
    let servers: [(zone: DomainName?, server: SocketAddress)]
    private let clock: any Clock
    private let log: Logger
    private struct Known {
        var name: String?
        var until: Int64
    }
    private struct State {
        var known: [IPAddress: Known] = [:]
        var waiting: [IPAddress] = []
    }
    private let state = Lock(State())
    private let worker: Worker

    /// nil when no server can be asked (every upstream is DNS-over-TLS, and no
    /// `local_forward` names a reverse zone).
    package init?(
        upstreams: [UpstreamSpec], localForwards: [LocalForward], clock: any Clock, log: Logger
    ) throws(SystemError) {
        var servers: [(zone: DomainName?, server: SocketAddress)] = []
        for forward in localForwards where forward.server.transport != .tls {
            let zone = forward.zone.description
            guard zone.hasSuffix("in-addr.arpa") || zone.hasSuffix("ip6.arpa") else { continue }
            servers.append((forward.zone, forward.server.server.socketAddress))
        }
        if let upstream = upstreams.first(where: { $0.transport != .tls }), Self.isLocal(upstream.server.address) {
            servers.append((nil, upstream.server.socketAddress))
        }
        guard !servers.isEmpty else { return nil }
        self.servers = servers
        self.clock = clock
        self.log = log
        worker = try Worker()
    }

    /// The name known for `address`, or nil; one not asked within its keeping time is asked
    /// now on the thread (the name found before stays shown meanwhile).
    package func name(for address: IPAddress) -> String? {
        let now = clock.wall().unixSeconds
        var ask = false
        let name = state.withLock { state -> String? in
            let known = state.known[address]
            if let known, known.until > now { return known.name }
            if !state.waiting.contains(address), state.waiting.count < 256 {
                state.waiting.append(address)
                ask = true
            }
            return known?.name
        }
        if ask {
            startOnce()
            worker.ring()
        }
        return name
    }

    package func stop() { worker.stop() }

    private func startOnce() {
        guard !worker.isStarted else { return }
        do {
            try worker.start(name: "pg-reverse", priority: .background) { [self] in loop() }
        } catch {
            log.warn("reverse_names", [("error", "\(error)"), ("note", "devices are not named by reverse DNS")])
        }
    }

    private func loop() {
        while !worker.isStopping {
            let next = state.withLock { state -> IPAddress? in
                state.waiting.isEmpty ? nil : state.waiting.removeFirst()
            }
            guard let address = next else {
                worker.wait(timeout: nil, clock: clock)
                continue
            }
            let name = lookUp(address)
            let until = clock.wall().unixSeconds + (name == nil ? Self.keepNoneSeconds : Self.keepSeconds)
            state.withLock { state in
                if state.known.count >= Self.capacity { state.known = [:] }
                state.known[address] = Known(name: name, until: until)
            }
        }
    }

    /// The PTR name of `address` from its server, or nil (none, an error, no answer in time).
    func lookUp(_ address: IPAddress) -> String? {
        let question = Self.reverseName(of: address)
        guard let name = try? DNSName(question),
            let server = servers.first(where: { $0.zone.map { question.hasSuffix("." + $0.description + ".") } ?? true }
            )
        else { return nil }
        let id = UInt16.random(in: 1...UInt16.max)
        var header = DNSHeader(id: id, questionCount: 1)
        header.recursionDesired = true
        var writer = DNSMessageWriter(header: header)
        writer.addQuestion(DNSQuestion(name: name, type: .ptr))
        let query = writer.finish()
        guard let socket = try? Socket.udp(connectedTo: server.server) else { return nil }
        defer { socket.close() }
        guard
            let reply = try? BlockingExchange.udp(
                query, id: id, on: socket, deadline: clock.now() &+ Self.timeout, clock: clock),
            let message = try? DNSMessage.parse(reply), message.rcode == .noError
        else { return nil }
        for record in message.answers {
            if case .ptr(let target) = record.rdata, !target.isRoot { return target.presentation }
        }
        return nil
    }

    /// `4.3.2.1.in-addr.arpa.` or the nibbles of an IPv6 address under `ip6.arpa.`.
    static func reverseName(of address: IPAddress) -> String {
        switch address {
        case .v4(let bits):
            return (0..<4).map { "\((bits >> (8 * UInt32($0))) & 0xFF)" }.joined(separator: ".") + ".in-addr.arpa."
        case .v6(let high, let low):
            let nibbles =
                (0..<16).map { (low >> (4 * UInt64($0))) & 0xF } + (0..<16).map { (high >> (4 * UInt64($0))) & 0xF }
            return nibbles.map { String($0, radix: 16) }.joined(separator: ".") + ".ip6.arpa."
        }
    }

    /// A resolver of the LAN or of this host: a private-use, loopback or link-local
    /// address, as the rebinding guard counts them.
    static func isLocal(_ address: IPAddress) -> Bool { address.isHostOrLinkScoped || address.isPrivateUse }
}
