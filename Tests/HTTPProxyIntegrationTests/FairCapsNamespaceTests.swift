import Foundation
import GateHarness
import Glibc
import TestSupport
import Testing

/// Fair caps (docs/proxy.md#who-is-served) with real MAC addresses, in network namespaces
/// the test makes: a gateway (`lan0`, 10.77.0.1) and, behind a veth pair, a LAN segment
/// with a hostile device and another device (`eth0`, 10.77.0.2). The hostile device is
/// either one MAC address with 20 IPv4 addresses (a macvlan), or 17 macvlans with a MAC
/// address and an address each; its connections leave through their own interface
/// (SO_BINDTODEVICE), so the gateway sees each MAC address where it should. No profile
/// lists a MAC address: the caps read the neighbour table anyway. The tunnels go to an echo
/// server on the gateway's loopback.
@Suite(.serialized, .blocking) struct FairCapsNamespaceTests {
    static let total = 48
    static let echoPort: UInt16 = 7000

    struct Shape: Sendable, CustomTestStringConvertible {
        let name: String
        /// (interface, address) of each of the hostile device's identities.
        let identities: [(String, String)]
        let perDevice: Int
        /// Tunnels the hostile device gets of its `total` attempts, and `429`s.
        let held: Int
        let refused: Int
        /// Tunnels the other device opens after it, and of those how many shed one of the
        /// hostile device's (the others fit under the total).
        let newcomer: Int
        let shed: Int
        var testDescription: String { name }
    }

    static let shapes = [
        // One device by its MAC address: its 20 addresses share the per-device cap (44, so
        // 4 of 48 attempts get 429); the other device's first 4 tunnels fill the total, and
        // each later one takes one of the device holding the most.
        Shape(
            name: "one MAC address, 20 addresses",
            identities: (0..<20).map { ("mv0", "10.77.0.\(10 + $0)") }, perDevice: 44, held: 44, refused: 4,
            newcomer: 6, shed: 2),
        // 17 MAC addresses are 17 devices, each under the per-device cap, together holding
        // the total: every tunnel of the other device takes one of theirs.
        Shape(
            name: "17 MAC addresses", identities: (0..<17).map { ("mv\($0)", "10.77.0.\(10 + $0)") },
            perDevice: 256, held: 48, refused: 0, newcomer: 3, shed: 3),
    ]

    @Test(arguments: shapes)
    func aDeviceHoldingEverySlotCannotKeepAnotherFromAConnection(_ shape: Shape) throws {
        let net = try NetworkNamespaces.make(devices: 1)
        defer { net.remove() }
        let scratch = try ScratchDirectory("pg-faircaps")
        try build(net, shape)
        let echo = try net.inside(net.gateway) { try EchoServer(port: Self.echoPort) }
        defer { echo.stop() }
        let policy = try scratch.write("policy.json", PolicyDocuments.json(blocked: ["reddit.com"]))
        // The gateway in the test's process, in its namespace, on a clock the test moves.
        let words = [
            "--policy", policy, "--dns-listen", "127.0.0.1:5300", "--proxy-listen", "10.77.0.1:3128", "--upstream",
            "127.0.0.1:5399", "--state-dir", scratch.path("state"), "--timezone", "UTC", "--lists",
            GateRun.checkout.appendingPathComponent("blocklists").path, "--allow-clients", "10.77.0.0/24",
            "--allow-local-destinations", "--allow-ip-connect", "--connect-ports", "\(Self.echoPort)",
            "--proxy-max-conns", "\(Self.total)", "--proxy-max-conns-per-client", "\(shape.perDevice)",
        ]
        let gate = try net.inside(net.gateway) { try InProcessGate(words, scratch: scratch, port: 5300) }
        defer { gate.stop() }
        // The gateway learns every identity's MAC address (a refused connection to a closed
        // port needs the neighbour entry both ways); a second later its cache may read the
        // table again at the first address it does not know.
        try net.inside(net.device) {
            for (interface, address) in shape.identities + [("eth0", "10.77.0.2")] {
                if let socket = try? Self.connection(from: address, through: interface, port: 9) { close(socket) }
            }
        }
        #expect(gate.advance(by: .seconds(1.2)))

        // The hostile device: as many tunnels as the total allows, round the identities.
        let hostile = try net.inside(net.device) { () -> [(ProxyClient?, String)] in
            (0..<Self.total).map { index in
                let (interface, address) = shape.identities[index % shape.identities.count]
                do {
                    let client = ProxyClient(
                        descriptor: try Self.connection(from: address, through: interface, port: 3128))
                    let status = Self.tunnel(client, probe: "x")
                    return (status == "200" ? client : nil, status)
                } catch {
                    return (nil, "\(error)")
                }
            }
        }
        let statuses = hostile.map(\.1)
        #expect(statuses.filter { $0 == "200" }.count == shape.held, "\(shape.name): \(statuses)")
        #expect(statuses.filter { $0 == "429" }.count == shape.refused, "\(shape.name): \(statuses)")
        let held = hostile.compactMap(\.0)

        // The other device: every tunnel it asks for works, from the first.
        // Its tunnels stay open, so that together they reach the total.
        let newcomer = try net.inside(net.device) { () -> [(ProxyClient?, String)] in
            (0..<shape.newcomer).map { index in
                do {
                    let client = ProxyClient(
                        descriptor: try Self.connection(from: "10.77.0.2", through: "eth0", port: 3128))
                    return (client, Self.tunnel(client, probe: "ping\(index)"))
                } catch {
                    return (nil, "\(error)")
                }
            }
        }
        let served = newcomer.map(\.1)
        #expect(served == Array(repeating: "200", count: shape.newcomer), "\(shape.name): \(served)")
        // The hostile device paid for them: one tunnel each beyond the total, none more.
        var closed = 0
        _ = waitUntil(timeout: 3_000_000_000, interval: 50_000_000) {
            closed = held.filter { $0.isClosed() }.count
            return closed >= shape.shed
        }
        // Every connection the gateway took has been dealt with: no tunnel is shed later.
        gate.waitForTurns()
        closed = held.filter { $0.isClosed() }.count
        #expect(closed == shape.shed, "\(shape.name): \(closed) of the hostile device's tunnels were shed")
        // What it still holds still works.
        if let kept = held.first(where: { !$0.isClosed() }) {
            kept.send("still")
            #expect(kept.read(until: "still").hasSuffix("still"), "\(shape.name): a kept tunnel echoes")
        }
        withExtendedLifetime((held, newcomer)) {}
    }

    /// The LAN: the gateway's `lan0` and the device side's `eth0`, and the hostile
    /// device's macvlans on `eth0`. ARP answers only for an interface's own addresses
    /// (arp_ignore = 1), with them as sender (arp_announce = 2), so each address is seen
    /// behind its own MAC address.
    private func build(_ net: NetworkNamespaces, _ shape: Shape) throws {
        let (gateway, device) = (net.gateway, net.device)
        try net.run(in: gateway, ["link", "set", "lo", "up"])
        try net.run(in: gateway, ["link", "add", "lan0", "type", "veth", "peer", "name", "eth0", "netns", device])
        try net.run(in: gateway, ["address", "add", "10.77.0.1/24", "dev", "lan0"])
        try net.run(in: gateway, ["link", "set", "lan0", "up"])
        for setting in ["net.ipv4.conf.all.arp_ignore=1", "net.ipv4.conf.all.arp_announce=2"] {
            let sysctl = try net.exec(in: device, ["sysctl", "-q", "-w", setting])
            let result = try Program.run(sysctl.path, sysctl.arguments)
            guard result.status == 0 else { throw NamespaceError.command("sysctl \(setting): \(result.stderr)") }
        }
        try net.run(in: device, ["link", "set", "lo", "up"])
        try net.run(in: device, ["address", "add", "10.77.0.2/24", "dev", "eth0"])
        try net.run(in: device, ["link", "set", "eth0", "up"])
        var made: Set<String> = []
        for (interface, address) in shape.identities {
            if made.insert(interface).inserted {
                try net.run(
                    in: device, ["link", "add", interface, "link", "eth0", "type", "macvlan", "mode", "bridge"])
                try net.run(in: device, ["link", "set", interface, "up"])
            }
            try net.run(in: device, ["address", "add", "\(address)/24", "dev", interface])
        }
    }

    /// A TCP connection to the gateway's `port` from `address` out of `interface`; made on
    /// the calling thread, which is inside the device's namespace.
    static func connection(from address: String, through interface: String, port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var time = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        let bound = interface.withCString {
            setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, $0, socklen_t(strlen($0) + 1))
        }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, address, &local.sin_addr)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        inet_pton(AF_INET, "10.77.0.1", &remote.sin_addr)
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        guard bound == 0, named == 0, connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw ProxyClientError(message: "connect from \(address) on \(interface) to port \(port): \(reason)")
        }
        return fd
    }

    /// CONNECT to the echo server; on `200`, `probe` must come back through the tunnel.
    /// The status, or what went wrong.
    static func tunnel(_ client: ProxyClient, probe: String) -> String {
        client.send("CONNECT 127.0.0.1:\(echoPort) HTTP/1.1\r\nHost: 127.0.0.1:\(echoPort)\r\n\r\n")
        let head = client.read(until: "\r\n\r\n")
        let status = head.split(separator: " ").dropFirst().first.map(String.init) ?? "no answer"
        guard status == "200" else { return status }
        client.send(probe)
        let echoed = client.read(until: probe)
        return echoed.hasSuffix(probe) ? status : "200 but no echo: \(echoed.debugDescription)"
    }
}

/// An echo server on 127.0.0.1:`port` of the namespace it is made in: each connection's
/// bytes come back, on a thread of its own, until the peer closes or `stop()`.
final class EchoServer: @unchecked Sendable {
    // Sendable: the descriptor is immutable; closing it ends the accepting thread.
    private let listener: Int32

    init(port: UInt16) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 256) == 0 else {
            close(listener)
            throw ProxyClientError(message: "echo server: cannot listen on \(port): errno \(errno)")
        }
        self.listener = listener
        Thread {
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                Thread {
                    defer { close(connection) }
                    var buffer = [UInt8](repeating: 0, count: 16_384)
                    var time = timeval(tv_sec: 60, tv_usec: 0)
                    setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
                    while true {
                        let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                        guard count > 0 else { return }
                        _ = buffer.withUnsafeBytes { send(connection, $0.baseAddress, count, Int32(MSG_NOSIGNAL)) }
                    }
                }.start()
            }
        }.start()
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
