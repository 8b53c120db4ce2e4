import Foundation
import TestSupport
import Testing

/// The proxy takes connections on the first `proxy_threads` loops and DNS is answered on the
/// first `dns_threads` (docs/performance.md#proxy-threads). Counted from the kernel's socket
/// tables and thread names, not timed.
@Suite(.serialized) struct ProxyThreadsIntegrationTests {
    let fixture: ProxyFixture

    init() throws { fixture = try ProxyFixture() }

    /// The sockets of process `pid` bound to `port` on 127.0.0.1 in `table` (`tcp` or
    /// `udp` under /proc/net) in `state` (0A: listening; 07: an unconnected UDP socket).
    static func sockets(of pid: Int32, port: UInt16, table: String, state: String) -> Int {
        let directory = "/proc/\(pid)/fd"
        var inodes: Set<Substring> = []
        for fd in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(fd)"),
                target.hasPrefix("socket:[")
            else { continue }
            inodes.insert(target.dropFirst("socket:[".count).dropLast())
        }
        let local = "0100007F:" + String(format: "%04X", port)
        let lines = ((try? String(contentsOfFile: "/proc/net/\(table)", encoding: .utf8)) ?? "").split(separator: "\n")
        return lines.dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 9 && fields[1] == local && fields[3] == state && inodes.contains(fields[9])
        }.count
    }

    static func loopThreads(of pid: Int32) -> Int {
        ProcessThread.all(of: pid).filter { $0.name.hasPrefix("pg-dns-") }.count
    }

    /// A CONNECT through the proxy to the origin, and a GET in the tunnel.
    func tunnelWorks() throws -> Bool {
        let result = try Curl.run(["-p", "-x", fixture.proxy, "http://origin.test:\(fixture.origin.port)/"])
        return result.exitCode == 0 && result.connectStatus == 200 && result.status == 200
    }

    @Test func theProxyListensOnMoreLoopsThanDNS() throws {
        let gate = try fixture.start(ProxyFixture.policy(), ["--dns-threads", "1", "--proxy-threads", "2"])
        let pid = gate.daemon.process.processIdentifier
        #expect(Self.loopThreads(of: pid) == 2)
        #expect(Self.sockets(of: pid, port: fixture.proxyPort, table: "tcp", state: "0A") == 2)
        #expect(Self.sockets(of: pid, port: gate.port, table: "udp", state: "07") == 1)
        #expect(Self.sockets(of: pid, port: gate.port, table: "tcp", state: "0A") == 1)
        // The kernel spreads connections over both listeners by their addresses: a run of
        // tunnels goes through both loops.
        for _ in 0..<8 { #expect(try tunnelWorks(), "\(gate.log)") }
        gate.daemon.stop()
    }

    @Test func dnsMayHaveMoreLoopsThanTheProxy() throws {
        let gate = try fixture.start(ProxyFixture.policy(), ["--dns-threads", "2", "--proxy-threads", "1"])
        let pid = gate.daemon.process.processIdentifier
        #expect(Self.loopThreads(of: pid) == 2)
        #expect(Self.sockets(of: pid, port: fixture.proxyPort, table: "tcp", state: "0A") == 1)
        #expect(Self.sockets(of: pid, port: gate.port, table: "udp", state: "07") == 2)
        #expect(try tunnelWorks(), "\(gate.log)")
        gate.daemon.stop()
    }

    /// By default every core takes proxy connections (up to 8), DNS half of them.
    @Test func byDefaultTheProxyHasEveryCore() throws {
        let gate = try fixture.start()
        let pid = gate.daemon.process.processIdentifier
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        #expect(Self.sockets(of: pid, port: fixture.proxyPort, table: "tcp", state: "0A") == max(1, min(cores, 8)))
        #expect(Self.sockets(of: pid, port: gate.port, table: "udp", state: "07") == max(1, min(cores / 2, 8)))
        #expect(Self.loopThreads(of: pid) == max(1, min(cores, 8)))
        gate.daemon.stop()
    }
}
