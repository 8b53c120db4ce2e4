import CSystem
import EventLoop
import Glibc
import Locks
import SystemIO
import Testing

/// Network namespaces made for one test — a gateway and one or more devices — and ways
/// to run code or a program inside one. Everything is made inside the namespaces (`ip -n`),
/// so the host's interfaces and addresses are never touched; `remove()` deletes them all,
/// which takes their veth pairs with them. Needs root.
public struct NetworkNamespaces: Sendable {
    public let gateway: String
    /// The first device's namespace.
    public var device: String { devices[0] }
    public let devices: [String]

    /// Makes a gateway and `devices` device namespaces (empty). Cancels the test, with the
    /// reason, when `ip netns add` is refused (not root, or no namespaces in this sandbox).
    public static func make(devices count: Int = 1) throws -> NetworkNamespaces {
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let made = NetworkNamespaces(
            gateway: "pgn-gw-\(suffix)", devices: (0..<count).map { "pgn-dev\($0)-\(suffix)" })
        var created: [String] = []
        for name in [made.gateway] + made.devices {
            let result = try ip(["netns", "add", name])
            guard result.status == 0 else {
                for done in created { _ = try? ip(["netns", "del", done]) }
                try Test.cancel(refusal(result))
            }
            created.append(name)
        }
        return made
    }

    /// `ip netns exec namespace` before `command`: a program's words to run it inside.
    public func exec(in namespace: String, _ command: [String]) throws -> (path: String, arguments: [String]) {
        (try Self.ipPath(), ["netns", "exec", namespace] + command)
    }

    private static func refusal(_ output: ProgramOutput) -> Comment {
        let reason = output.stderr.split(separator: "\n").joined(separator: "; ")
        return "`ip netns add` refused (the test needs root and network namespaces): \(reason)"
    }

    /// Deletes every namespace; what fails is recorded, not thrown (it runs in a `defer`).
    public func remove() {
        for name in [gateway] + devices {
            do {
                let result = try Self.ip(["netns", "del", name])
                if result.status != 0 { Issue.record("ip netns del \(name): \(result.stderr)") }
            } catch {
                Issue.record("ip netns del \(name): \(error)")
            }
        }
    }

    /// `ip -n namespace arguments…`, which must succeed.
    public func run(in namespace: String, _ arguments: [String]) throws {
        let result = try Self.ip(["-n", namespace] + arguments)
        guard result.status == 0 else {
            throw NamespaceError.command("ip -n \(namespace) \(arguments.joined(separator: " ")): \(result.stderr)")
        }
    }

    /// A LAN: in the gateway's namespace a bridge `br0` with `gatewayAddress` (CIDR), and
    /// each device's `eth0` on it (a veth whose other end is the gateway's `lanN`) with its
    /// address (CIDR) and, when given, its MAC; loopback up everywhere.
    public func bridgedLAN(gateway gatewayAddress: String, devices addresses: [(address: String, mac: String?)]) throws
    {
        try run(in: gateway, ["link", "set", "lo", "up"])
        try run(in: gateway, ["link", "add", "br0", "type", "bridge"])
        try run(in: gateway, ["address", "add", gatewayAddress, "dev", "br0"])
        try run(in: gateway, ["link", "set", "br0", "up"])
        for (index, device) in zip(addresses.indices, devices) {
            let port = "lan\(index)"
            try run(in: gateway, ["link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", device])
            try run(in: gateway, ["link", "set", port, "master", "br0"])
            try run(in: gateway, ["link", "set", port, "up"])
            if let mac = addresses[index].mac { try run(in: device, ["link", "set", "eth0", "address", mac]) }
            try run(in: device, ["address", "add", addresses[index].address, "dev", "eth0"])
            try run(in: device, ["link", "set", "eth0", "up"])
            try run(in: device, ["link", "set", "lo", "up"])
        }
    }

    /// Runs `body` on a new thread that has entered `namespace` (setns(2) moves only the
    /// calling thread, so no thread of the test runner ever leaves the host's namespace).
    /// Sockets made in `body` stay in that namespace wherever they are used later.
    public func inside<T: Sendable>(_ namespace: String, _ body: @escaping @Sendable () throws -> T) throws -> T {
        let outcome = Lock<Result<T, any Error>?>(nil)
        let thread = try SystemThread.spawn(name: "pg-netns") {
            let result = Result { () throws -> T in
                let descriptor = open("/run/netns/\(namespace)", O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { throw SystemError("open", errno: errno, subject: namespace) }
                defer { close(descriptor) }
                _ = try systemCall("setns", subject: namespace) { cs_setns_network(descriptor) }
                return try body()
            }
            outcome.withLock { $0 = result }
        }
        thread.join()
        return try outcome.withLock { $0! }.get()
    }

    private static func ip(_ arguments: [String]) throws -> ProgramOutput {
        try Program.run(try ipPath(), arguments)
    }

    private static func ipPath() throws -> String {
        let candidates: [String] = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
        guard let path = candidates.first(where: { access($0, X_OK) == 0 }) else {
            throw NamespaceError.command("ip (iproute2) is not installed")
        }
        return path
    }
}

public enum NamespaceError: Error, CustomStringConvertible {
    case command(String)
    case noEcho(String)

    public var description: String {
        switch self {
        case .command(let text): text
        case .noEcho(let text): "no echo: \(text)"
        }
    }
}

/// A UDP round trip, as ping would make: the device sends from `device` to the gateway's
/// `echo` socket, which answers to the source. The answer makes the gateway resolve the
/// device's address (ARP or neighbour solicitation), so once it is back the gateway's
/// neighbour table holds that address. Sent again every 200 ms (the first datagrams can be
/// lost while a new link comes up), for at most 5 s.
public func roundTrip(from device: Socket, to gateway: SocketAddress, echo: Socket) throws {
    let payload: [UInt8] = Array("phosra-gate neighbour test".utf8)
    for _ in 0..<25 {
        _ = try payload.withUnsafeBytes { try device.send($0, to: gateway) }
        if readable(echo, milliseconds: 200) {
            var buffer = ByteBuffer()
            while let source = try echo.receive(into: &buffer) {
                _ = try buffer.withUnsafeReadableBytes { try echo.send($0, to: source) }
                buffer.clear()
            }
        }
        if readable(device, milliseconds: 200) {
            var buffer = ByteBuffer()
            if try device.receive(into: &buffer) != nil { return }
        }
    }
    throw NamespaceError.noEcho("\(device) → \(gateway)")
}

/// Waits for `socket` to have something to read, for at most `milliseconds`.
private func readable(_ socket: Socket, milliseconds: Int32) -> Bool {
    var entry = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
    while true {
        let count = poll(&entry, 1, milliseconds)
        if count < 0, errno == EINTR { continue }
        return count > 0
    }
}

extension NetworkNamespaces {
    /// dnsmasq in the gateway's namespace on `address`:`port`, answering only `records`
    /// (`--host-record` values, `name,address`); its log in `logFile`. Kill it when done.
    public func upstreamDnsmasq(
        address: String = "127.0.0.1", port: UInt16 = 5399, records: [String], logFile: String
    ) throws -> SpawnedServer {
        let command = try exec(
            in: gateway,
            [
                "/usr/sbin/dnsmasq", "--keep-in-foreground", "--no-resolv", "--no-hosts", "--no-poll",
                "--conf-file=/dev/null", "--pid-file=", "--bind-interfaces", "--listen-address=\(address)",
                "--port=\(port)", "--log-facility=-",
            ] + records.map { "--host-record=" + $0 })
        return try SpawnedServer(command.path, command.arguments, logFile: logFile, readyWhenLogContains: "started")
    }
}
