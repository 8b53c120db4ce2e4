import Foundation
import GateHarness
import Glibc
import TestSupport
import Testing

/// Only the LAN is served (docs/network.md#who-is-served), in network namespaces the test
/// makes: the real gateway with a LAN link (`lan0`) to a device and a WAN link (`wan0`) to
/// a host on the internet side, running `phosra-gate run` with `lan_interfaces = lan0`,
/// DNS, the proxy and the transparent listener on wildcard addresses, and `allow_clients`
/// open to every address, so that nothing but the arrival interface can refuse. From the
/// WAN side, sources that look like the LAN's, a carrier NAT's (RFC 6598), a private range
/// (RFC 1918) and the WAN's own /64, asking the gateway's LAN and WAN addresses, get no
/// answer over UDP and a reset over TCP; the same from the device and from the gateway's
/// loopback is answered. Sources the device spoofs over UDP are answered but named as no
/// device in `status`. Addresses are from the documentation ranges (or private ones) and
/// exist only inside these namespaces.
@Suite(.serialized, .blocking) struct LANOnlyNamespaceTests {
    static let deviceMAC = "02:00:5e:10:00:0a"
    static let (device4, device6) = ("198.51.100.10", "2001:db8:1::10")
    static let (lan4, lan6) = ("198.51.100.1", "2001:db8:1::1")
    static let (wan4, wan6) = ("203.0.113.1", "2001:db8:2::1")
    /// On the internet side: the host's own address, a carrier NAT's, a private one, one
    /// of the LAN's; in IPv6 the host's and another in the WAN's /64, and one of the LAN's.
    static let wanSources = [
        "203.0.113.7", "100.64.0.5", "10.1.2.3", "198.51.100.99", "2001:db8:2::7", "2001:db8:2::66", "2001:db8:1::99",
    ]
    /// The WAN sources a TCP handshake completes from: the gateway routes them back to the
    /// WAN (a LAN address's SYN-ACK goes to the LAN).
    static let tcpSources = ["203.0.113.7", "100.64.0.5", "10.1.2.3", "2001:db8:2::7", "2001:db8:2::66"]
    /// UDP sources the device writes into raw packets: no host has them.
    static let spoofed = (200..<220).map { "198.51.100.\($0)" }
    static let (dnsPort, proxyPort, transparentPort, metricsPort): (UInt16, UInt16, UInt16, UInt16) = (
        53, 3128, 3129, 9153
    )

    @Test func whatArrivesOffTheLANIsRefusedWhateverItsSource() throws {
        let net = try NetworkNamespaces.make(devices: 2)
        defer { net.remove() }
        let (gateway, device, internet) = (net.gateway, net.devices[0], net.devices[1])
        let scratch = try ScratchDirectory("pg-lan-only")
        try build(net, scratch)
        let policy = try scratch.write("kid.json", PolicyDocuments.json(blocked: ["reddit.com"]))
        let config = try scratch.write(
            "phosra-gate.conf",
            """
            lan_interfaces = lan0
            dns_listen = 0.0.0.0:\(Self.dnsPort), [::]:\(Self.dnsPort)
            proxy_listen = 0.0.0.0:\(Self.proxyPort), [::]:\(Self.proxyPort)
            transparent_listen = 0.0.0.0:\(Self.transparentPort), [::]:\(Self.transparentPort)
            metrics_listen = 127.0.0.1:\(Self.metricsPort)
            upstream = 127.0.0.1:5399
            state_dir = \(scratch.path("state"))
            lists = \(GateRun.checkout.appendingPathComponent("blocklists").path)
            timezone = UTC
            # Every source is allowed: only the interface a packet came in on refuses it.
            allow_clients = 0.0.0.0/0, ::/0
            policy = \(policy)
            """)
        // The gateway in the test's process, in its namespace, on a clock the test moves.
        let gate = try net.inside(gateway) {
            try InProcessGate(
                ["--config", config], scratch: scratch, port: Self.dnsPort, defaults: false,
                stateDirectory: scratch.path("state"))
        }
        defer { gate.stop() }

        func inside(_ namespace: String, _ words: [String]) throws -> String {
            let command = try net.exec(in: namespace, words)
            return try SpawnedServer.run([command.path] + command.arguments, logFile: scratch.path("cmd.out")).output
        }
        func dig(_ namespace: String, _ server: String, _ options: [String] = []) throws -> DigAnswer {
            DigAnswer(
                output: try inside(
                    namespace, ["dig", "@\(server)", "www.reddit.com", "A", "+tries=2", "+time=2"] + options))
        }
        func refused() throws -> [String: Int] {
            let page = try inside(gateway, ["curl", "-s", "http://127.0.0.1:\(Self.metricsPort)/metrics"])
            var counts: [String: Int] = [:]
            for line in page.split(separator: "\n") where line.hasPrefix("phosra_gate_off_lan_refused_total{") {
                let parts = line.split(separator: "\"")
                if parts.count == 3, let value = Int(parts[2].dropFirst(2)) { counts[String(parts[1])] = value }
            }
            return counts
        }
        let blocked = ["15 (Blocked): (blocked_domain:reddit.com)"]

        // The LAN and loopback are answered: DNS over UDP and TCP, both families, and the proxy.
        for server in [Self.lan4, Self.lan6] {
            #expect(try dig(device, server).extendedErrors == blocked, "\(server) from the device")
            #expect(try dig(device, server, ["+tcp"]).extendedErrors == blocked, "\(server) over TCP from the device")
        }
        #expect(try dig(gateway, "127.0.0.1").extendedErrors == blocked, "loopback")
        #expect(try dig(gateway, "::1", ["+tcp"]).extendedErrors == blocked, "loopback over TCP")
        let proxied = try net.inside(device) { () throws -> String in
            String(
                decoding: try Probe.tcp(from: Self.device4, to: Self.lan4, port: Self.proxyPort, Probe.request),
                as: UTF8.self)
        }
        #expect(proxied.hasPrefix("HTTP/1.1 403"), "the proxy from the device: \(proxied)")
        #expect(try refused() == ["dns_udp": 0, "dns_tcp": 0, "proxy": 0, "transparent": 0])

        // The WAN side, to the gateway's LAN and WAN addresses: no UDP answer, every TCP
        // connection reset before a byte.
        let probes = try net.inside(internet) { () throws -> [(String, Int32)] in
            var sockets: [(String, Int32)] = []
            for source in Self.wanSources {
                for server in source.contains(":") ? [Self.lan6, Self.wan6] : [Self.lan4, Self.wan4] {
                    sockets.append(
                        ("\(source) → \(server)", try Probe.udp(from: source, to: server, port: Self.dnsPort)))
                }
            }
            return sockets
        }
        defer { for (_, fd) in probes { close(fd) } }
        // Each datagram has reached the gateway and been dealt with: an answer that was
        // going to come has come.
        _ = waitUntil(timeout: .seconds(5), interval: 100_000_000) {
            (try? refused())?["dns_udp"] == probes.count
        }
        let udpReplies = probes.filter { Probe.hasDatagram($0.1) }.map(\.0)
        #expect(udpReplies.isEmpty, "answered off the LAN: \(udpReplies)")
        let tcpReplies = try net.inside(internet) { () throws -> [String] in
            var answered: [String] = []
            for source in Self.tcpSources {
                for server in source.contains(":") ? [Self.lan6, Self.wan6] : [Self.lan4, Self.wan4] {
                    for (port, bytes) in [
                        (Self.dnsPort, Probe.tcpQuery), (Self.proxyPort, Probe.request),
                        (Self.transparentPort, Probe.request),
                    ] {
                        let got = try Probe.tcp(from: source, to: server, port: port, bytes)
                        if !got.isEmpty { answered.append("\(source) → \(server):\(port) got \(got.count) bytes") }
                    }
                }
            }
            return answered
        }
        #expect(tcpReplies.isEmpty, "\(tcpReplies)")
        // Each was seen and refused by the gateway (not lost on the way): 7 sources × 2 servers
        // over UDP, 5 × 2 per TCP listener.
        let counts = waitFor(timeout: 5_000_000_000, interval: 100_000_000) { () -> [String: Int]? in
            let counts = try? refused()
            return counts?["dns_udp"] == 14 && counts?["transparent"] == 10 ? counts : nil
        }
        #expect(counts == ["dns_udp": 14, "dns_tcp": 10, "proxy": 10, "transparent": 10], "\(gate.log)")

        // Spoofed sources from the LAN side are answered (their hits say so), but `status`
        // names only the device (by its MAC, from the neighbour table) and loopback.
        try net.inside(device) { try Probe.spoofedQueries(from: Self.spoofed, to: Self.lan4) }
        // A query after a second: the gateway's neighbour cache reads the table again.
        #expect(gate.advance(by: .seconds(1.1)))
        #expect(try dig(device, Self.lan4).extendedErrors == blocked)
        // Written by the flush every 5 s: the hits and the devices seen together.
        #expect(gate.advance(by: .seconds(5)))
        let answered = waitFor(timeout: 15_000_000_000, interval: 500_000_000) { () -> [String]? in
            let hits = try? GateCommand.run(["hits", "--state-dir", scratch.path("state"), "--json"])
            let clients = Self.spoofed.filter { hits?.stdout.contains("\"\($0)\"") == true }
            return clients.count == Self.spoofed.count ? clients : nil
        }
        #expect(answered != nil, "the spoofed queries were answered (their hits)")
        // The flush writes the devices seen in a transaction after the hits': a
        // reading between the two sees the hits alone.
        var devices: Set<String> = []
        _ = try waitUntil(timeout: 6_000_000_000, interval: 250_000_000) {
            let status = try GateCommand.run(["status", "--state-dir", scratch.path("state"), "--json"])
            let json = try TestJSON.parse(Array(status.stdout.utf8))
            devices = Set(
                (json["profiles"]?.array ?? []).flatMap { $0["devices_last_hour"]?.array ?? [] }
                    .compactMap { $0["client"]?.string })
            return devices.contains(Self.deviceMAC)
        }
        #expect(devices.contains(Self.deviceMAC), "the device by its MAC: \(devices)")
        // The device over TCP before its MAC was read may show by its address too.
        let known: Set = ["127.0.0.1", "::1", Self.deviceMAC, Self.device4, Self.device6]
        #expect(devices.isSubset(of: known), "\(devices.subtracting(known)) are not devices")
        #expect(try refused()["dns_udp"] == 14, "nothing from the LAN refused")
        #expect(gate.isRunning)
    }

    /// The gateway between `lan0` (the device) and `wan0` (the internet side), routing both
    /// ways; reverse-path filtering off on the gateway, so a WAN packet with a LAN source
    /// reaches the daemon and only the daemon can refuse it.
    private func build(_ net: NetworkNamespaces, _ scratch: ScratchDirectory) throws {
        let (gateway, device, internet) = (net.gateway, net.devices[0], net.devices[1])
        try net.run(in: gateway, ["link", "set", "lo", "up"])
        for (link, peer) in [("lan0", device), ("wan0", internet)] {
            try net.run(in: gateway, ["link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", peer])
        }
        try net.run(in: gateway, ["address", "add", "\(Self.lan4)/24", "dev", "lan0"])
        try net.run(in: gateway, ["-6", "address", "add", "\(Self.lan6)/64", "dev", "lan0", "nodad"])
        try net.run(in: gateway, ["address", "add", "\(Self.wan4)/24", "dev", "wan0"])
        try net.run(in: gateway, ["-6", "address", "add", "\(Self.wan6)/64", "dev", "wan0", "nodad"])
        for link in ["lan0", "wan0"] { try net.run(in: gateway, ["link", "set", link, "up"]) }
        for range in ["100.64.0.0/10", "10.0.0.0/8"] {
            try net.run(in: gateway, ["route", "add", range, "via", "203.0.113.7"])
        }
        for setting in [
            "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1", "net.ipv4.conf.all.rp_filter=0",
            "net.ipv4.conf.wan0.rp_filter=0",
        ] {
            let sysctl = try net.exec(in: gateway, ["sysctl", "-q", "-w", setting])
            let result = try Program.run(sysctl.path, sysctl.arguments)
            guard result.status == 0 else { throw NamespaceError.command("sysctl \(setting): \(result.stderr)") }
        }

        try net.run(in: device, ["link", "set", "lo", "up"])
        try net.run(in: device, ["link", "set", "eth0", "address", Self.deviceMAC])
        try net.run(in: device, ["address", "add", "\(Self.device4)/24", "dev", "eth0"])
        try net.run(in: device, ["-6", "address", "add", "\(Self.device6)/64", "dev", "eth0", "nodad"])
        try net.run(in: device, ["link", "set", "eth0", "up"])
        try net.run(in: device, ["route", "add", "default", "via", Self.lan4])
        try net.run(in: device, ["-6", "route", "add", "default", "via", Self.lan6])

        try net.run(in: internet, ["link", "set", "lo", "up"])
        try net.run(in: internet, ["address", "add", "203.0.113.7/24", "dev", "eth0"])
        for source in Self.wanSources where source != "203.0.113.7" {
            let ipv6 = source.contains(":")
            let prefix = source.hasPrefix("2001:db8:2::") ? "/64" : (ipv6 ? "/128" : "/32")
            let words = ["address", "add", source + prefix, "dev", "eth0"]
            try net.run(in: internet, ipv6 ? ["-6"] + words + ["nodad"] : words)
        }
        try net.run(in: internet, ["link", "set", "eth0", "up"])
        try net.run(in: internet, ["route", "add", "198.51.100.0/24", "via", Self.wan4])
        try net.run(in: internet, ["-6", "route", "add", "2001:db8:1::/64", "via", Self.wan6])
    }
}

/// Plain blocking sockets on the calling thread, which is inside a namespace: a source
/// address of its own, every wait bounded.
enum Probe {
    static let request = Array("GET http://www.reddit.com/ HTTP/1.1\r\nHost: www.reddit.com\r\n\r\n".utf8)
    static var tcpQuery: [UInt8] {
        let query = RawSockets.query("www.reddit.com", id: 7)
        return [0, UInt8(query.count)] + query
    }

    /// `text` with `port` as a socket address, and its length.
    static func address(_ text: String, port: UInt16) -> (sockaddr_storage, socklen_t) {
        var storage = sockaddr_storage()
        if text.contains(":") {
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    address.pointee.sin6_family = sa_family_t(AF_INET6)
                    address.pointee.sin6_port = port.bigEndian
                    inet_pton(AF_INET6, text, &address.pointee.sin6_addr)
                }
            }
            return (storage, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
        withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                address.pointee.sin_family = sa_family_t(AF_INET)
                address.pointee.sin_port = port.bigEndian
                inet_pton(AF_INET, text, &address.pointee.sin_addr)
            }
        }
        return (storage, socklen_t(MemoryLayout<sockaddr_in>.size))
    }

    /// A socket of `type` bound to `source`, with 3 s send and receive timeouts.
    static func socket(_ type: Int32, from source: String) throws -> Int32 {
        let fd = Glibc.socket(source.contains(":") ? AF_INET6 : AF_INET, type | Int32(SOCK_CLOEXEC.rawValue), 0)
        var time = timeval(tv_sec: 3, tv_usec: 0)
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            setsockopt(fd, SOL_SOCKET, option, &time, socklen_t(MemoryLayout<timeval>.size))
        }
        var (local, length) = address(source, port: 0)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard fd >= 0, bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw NamespaceError.command("bind \(source): \(reason)")
        }
        return fd
    }

    /// A DNS query for www.reddit.com from `source` to `server`; the socket, to read later.
    static func udp(from source: String, to server: String, port: UInt16) throws -> Int32 {
        let fd = try socket(Int32(SOCK_DGRAM.rawValue), from: source)
        var (remote, length) = address(server, port: port)
        let query = RawSockets.query("www.reddit.com", id: 9)
        _ = query.withUnsafeBytes { bytes in
            withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, 0, $0, length)
                }
            }
        }
        return fd
    }

    /// Whether a datagram waits on `fd`, without waiting.
    static func hasDatagram(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) >= 0
    }

    /// Connects from `source` to `server`:`port`, sends `bytes` and reads until the end of
    /// the stream, a reset or 3 s without a byte: what came back.
    static func tcp(from source: String, to server: String, port: UInt16, _ bytes: [UInt8]) throws -> [UInt8] {
        let fd = try socket(Int32(SOCK_STREAM.rawValue), from: source)
        defer { close(fd) }
        var (remote, length) = address(server, port: port)
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        guard connected == 0 else {
            throw NamespaceError.command("connect \(source) → \(server):\(port): \(String(cString: strerror(errno)))")
        }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return received }
            received += buffer[0..<count]
        }
    }

    /// DNS queries over UDP from each of `sources`, which no host has: IPv4 packets written
    /// whole on a raw socket (the kernel fills in the length, the identification and the
    /// header checksum; a UDP checksum of 0 is none, RFC 768).
    static func spoofedQueries(from sources: [String], to server: String) throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), Int32(IPPROTO_RAW))
        guard fd >= 0 else { throw NamespaceError.command("raw socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var (remote, length) = address(server, port: 53)
        for (index, source) in sources.enumerated() {
            let query = RawSockets.query("www.reddit.com", id: UInt16(100 + index))
            let udpLength = 8 + query.count
            var packet: [UInt8] = [0x45, 0, 0, 0, 0, 0, 0, 0, 64, 17, 0, 0]
            var from = in_addr()
            var to = in_addr()
            inet_pton(AF_INET, source, &from)
            inet_pton(AF_INET, server, &to)
            packet += withUnsafeBytes(of: from.s_addr) { Array($0) } + withUnsafeBytes(of: to.s_addr) { Array($0) }
            let sourcePort = UInt16(40_000 + index)
            packet += [UInt8(sourcePort >> 8), UInt8(sourcePort & 0xFF), 0, 53]
            packet += [UInt8(udpLength >> 8), UInt8(udpLength & 0xFF), 0, 0] + query
            let sent = packet.withUnsafeBytes { bytes in
                withUnsafePointer(to: &remote) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, bytes.baseAddress, bytes.count, 0, $0, length)
                    }
                }
            }
            guard sent == packet.count else {
                throw NamespaceError.command("raw send from \(source): \(String(cString: strerror(errno)))")
            }
        }
    }
}
