import CSystem
import DNSProxy
import DNSUpstream
import DNSWire
import DomainMatch
import EventLoop
import Gateway
import Glibc
import SystemIO

/// `doctor`'s probes of a running gateway (docs/doctor.md): each asks once, waits a
/// bounded time and reports what it found; `DoctorVerdict` judges it. Blocking calls on
/// the command's own thread: `doctor` has no event loop but the upstream probe's.
enum DoctorProbe {
    struct Failure: Error, Equatable {
        let reason: String
        init(_ reason: String) { self.reason = reason }
        init(_ error: SystemError) { reason = String(cString: strerror(error.errno)).lowercased() }
    }

    /// How long a listener may take to answer; the gateway answers its own names at once.
    static let timeout: Nanoseconds = 2_000_000_000

    /// Where a probe reaches a listener: a wildcard address through loopback.
    static func reachable(_ listen: ListenAddress) -> ListenAddress {
        switch listen.address {
        case .v4(0): ListenAddress(address: .v4(0x7F00_0001), port: listen.port)
        case .v6(0, 0): ListenAddress(address: .v6(high: 0, low: 1), port: listen.port)
        default: listen
        }
    }

    /// The canary question, with EDNS so that a block answer carries its reason (EDE 15).
    static func canaryQuery(id: UInt16) -> [UInt8] {
        var header = DNSHeader(id: id, questionCount: 1)
        header.recursionDesired = true
        var writer = DNSMessageWriter(header: header, edns: EDNS())
        writer.addQuestion(DNSQuestion(name: try! DNSName(LocalZones.blockCanary.description + "."), type: .a))
        return writer.finish()
    }

    /// Asks the canary question at `listen` over UDP or TCP. Returns the reply and this
    /// host's address as the gateway saw it (which picks the profile).
    static func askCanary(
        at listen: ListenAddress, tcp: Bool, clock: any Clock
    ) -> Result<
        (reply: [UInt8], client: IPAddress), Failure
    > {
        let id = UInt16.random(in: 1...UInt16.max)
        let query = canaryQuery(id: id)
        let peer = reachable(listen).socketAddress
        let deadline = clock.now() &+ timeout
        do {
            let socket: Socket
            var reply: [UInt8]
            if tcp {
                socket = try connect(peer, deadline: deadline, clock: clock)
                reply = try exchangeTCP(socket, query, deadline: deadline, clock: clock)
            } else {
                socket = try Socket.udp(connectedTo: peer)
                guard let answer = try BlockingExchange.udp(query, id: id, on: socket, deadline: deadline, clock: clock)
                else { throw Failure("timed out") }
                reply = answer
            }
            guard reply.count >= 2, UInt16(reply[0]) << 8 | UInt16(reply[1]) == id else {
                throw Failure("an answer to another question")
            }
            let client = (try? socket.localAddress())?.ipAddress ?? reachable(listen).address
            return .success((reply, client))
        } catch let failure as Failure {
            return .failure(failure)
        } catch let error as SystemError {
            return .failure(Failure(error))
        } catch {
            return .failure(Failure("\(error)"))
        }
    }

    /// A TCP connect to `listen` (the HTTP proxy's and the transparent listener).
    static func connects(to listen: ListenAddress, clock: any Clock) -> DoctorVerdict.Probe {
        do {
            let socket = try connect(reachable(listen).socketAddress, deadline: clock.now() &+ timeout, clock: clock)
            socket.close()
            return .answered
        } catch let failure as Failure {
            return .failed(failure.reason)
        } catch let error as SystemError {
            return .failed(Failure(error).reason)
        } catch {
            return .failed("\(error)")
        }
    }

    // MARK: Sockets, blocking with a deadline

    private static func connect(_ peer: SocketAddress, deadline: Nanoseconds, clock: any Clock) throws -> Socket {
        let socket = try Socket.connect(to: peer)
        try wait(socket, for: Int16(POLLOUT), deadline: deadline, clock: clock)
        try socket.finishConnect()
        return socket
    }

    private static func exchangeTCP(
        _ socket: Socket, _ query: [UInt8], deadline: Nanoseconds, clock: any Clock
    ) throws -> [UInt8] {
        var out = ByteBuffer(capacity: query.count + 2)
        _ = out.writeInteger(UInt16(query.count))
        _ = out.writeBytes(query)
        while out.readableBytes > 0 {
            try wait(socket, for: Int16(POLLOUT), deadline: deadline, clock: clock)
            _ = try socket.write(from: &out)
        }
        var input = ByteBuffer(capacity: 4096)
        while true {
            if let length = input.getInteger(at: 0, as: UInt16.self), input.readableBytes >= Int(length) + 2 {
                return input.getBytes(at: 2, length: Int(length)) ?? []
            }
            try wait(socket, for: Int16(POLLIN), deadline: deadline, clock: clock)
            if case .eof = try socket.read(into: &input) { throw Failure("connection closed before the answer") }
        }
    }

    /// Waits until `socket` is ready for `events`, or throws "timed out" at `deadline`.
    private static func wait(_ socket: Socket, for events: Int16, deadline: Nanoseconds, clock: any Clock) throws {
        let ready: Bool
        do { ready = try waitReady([socket.descriptor], for: events, deadline: deadline, clock: clock) } catch {
            throw Failure(error)
        }
        guard ready else { throw Failure("timed out") }
    }

    // MARK: The kernel's clock

    static func kernelClock() -> DoctorVerdict.KernelClock {
        var status: Int32 = 0
        let state = cs_clock_state(&status)
        return DoctorVerdict.kernelClock(
            state: state, status: status, errno: state < 0 ? errno : 0, unsync: CS_STA_UNSYNC,
            timeError: CS_TIME_ERROR)
    }
}
