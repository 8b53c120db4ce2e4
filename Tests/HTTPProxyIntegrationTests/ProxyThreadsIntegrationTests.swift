import Foundation
import TestSupport
import Testing

/// The proxy takes connections on the first `proxy_threads` loops and DNS is answered on the
/// first `dns_threads` (docs/performance.md#proxy-threads). Counted from the kernel's socket
/// tables and thread names, not timed.
@Suite(.serialized, .blocking) struct ProxyThreadsIntegrationTests {
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

    /// More proxy loops than DNS ones, and the other way round: the daemon runs the larger
    /// number of loops, each kind of listener on its own first ones.
    @Test(arguments: [(dns: 1, proxy: 2), (dns: 2, proxy: 1)])
    func eachServiceListensOnItsOwnNumberOfLoops(threads: (dns: Int, proxy: Int)) throws {
        let gate = try fixture.start(
            ProxyFixture.policy(), ["--dns-threads", "\(threads.dns)", "--proxy-threads", "\(threads.proxy)"])
        let pid = gate.daemon.process.processIdentifier
        #expect(Self.loopThreads(of: pid) == max(threads.dns, threads.proxy))
        #expect(Self.sockets(of: pid, port: fixture.proxyPort, table: "tcp", state: "0A") == threads.proxy)
        #expect(Self.sockets(of: pid, port: gate.port, table: "udp", state: "07") == threads.dns)
        #expect(Self.sockets(of: pid, port: gate.port, table: "tcp", state: "0A") == threads.dns)
        // The kernel spreads connections over the listeners by their addresses: a run of
        // tunnels goes through every proxy loop.
        for _ in 0..<8 { #expect(try tunnelWorks(), "\(gate.log)") }
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
