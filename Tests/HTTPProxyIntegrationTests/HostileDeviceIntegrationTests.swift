import Foundation
import TestSupport
import Testing

/// One device that holds every DNS-over-TCP and proxy connection it is allowed and
/// trickles a byte a second into each, from one address and then from thirty: another
/// device's `dig +tcp` and `curl -x` are served throughout, and the gateway's descriptors
/// and memory stay within what the caps allow (docs/configuration.md#limits).
@Suite(.serialized, .blocking) struct HostileDeviceIntegrationTests {
    static let tcpMaxPerClient = 16
    static let tcpMax = 256
    static let proxyMaxPerClient = 32
    static let proxyMax = 512

    @Test(arguments: [1, 30])
    func anotherDeviceIsServedThroughout(addresses: Int) throws {
        HostileConnections.raiseOpenFileLimit()
        let fixture = try ProxyFixture()
        let gate = try fixture.start(
            ProxyFixture.policy(),
            [
                "--tcp-max-per-client", "\(Self.tcpMaxPerClient)", "--tcp-max", "\(Self.tcpMax)",
                "--proxy-max-conns-per-client", "\(Self.proxyMaxPerClient)", "--proxy-max-conns", "\(Self.proxyMax)",
                "--rate-limit", "0",
            ])
        let baselineFiles = ProcessSample.openFiles(gate.daemon.pid)
        let baselineMemory = gate.daemon.residentBytes
        // Devices 127.0.0.2…: each tries for more than its cap, so the per-client cap
        // holds it, and thirty together exceed the total caps, so those hold them.
        let query = RawQuery.framed("www.example.test")
        let head = Array("GET http://origin.test:\(fixture.origin.port)/ HTTP/1.1\r\nHost: origin.test\r\n".utf8)
        let devices = (0..<addresses).map { "127.0.0.\(2 + $0)" }
        let dns = devices.map { HostileConnections(source: $0, port: gate.port, message: query) }
        let proxy = devices.map { HostileConnections(source: $0, port: fixture.proxyPort, message: head) }
        var failures: [String] = []
        var peakFiles = 0
        var peakMemory = 0
        let clock = ContinuousClock()
        let end = clock.now + .seconds(14)
        var rounds = 0
        while clock.now < end {
            for connections in dns { connections.topUp(to: Self.tcpMaxPerClient + 4) }
            for connections in proxy { connections.topUp(to: Self.proxyMaxPerClient + 4) }
            for connections in dns + proxy { connections.trickle() }
            // The other device, 127.0.0.1.
            let answer = try gate.dig("origin.test", "A", ["+tcp", "+tries=1", "+time=2"])
            if answer.answerData != ["127.0.0.1"] {
                failures.append("dig +tcp round \(rounds): \(answer.status ?? "no answer") \(answer.answerData)")
            }
            let page = try fixture.curl(["--max-time", "3", "http://origin.test:\(fixture.origin.port)/"])
            if page.status != 200 { failures.append("curl -x round \(rounds): \(page.status) \(page.output)") }
            peakFiles = max(peakFiles, ProcessSample.openFiles(gate.daemon.pid))
            peakMemory = max(peakMemory, gate.daemon.residentBytes)
            rounds += 1
            HostileConnections.waitForPeer(dns + proxy, milliseconds: 1000)
        }
        #expect(failures.isEmpty, "\(failures)")
        #expect(rounds >= 8, "\(rounds) rounds")
        let held = dns.map(\.count).reduce(0, +) + proxy.map(\.count).reduce(0, +)
        #expect(held > 0, "the hostile device held connections")
        // Every connection the caps allow (one address: its own caps), plus the other
        // device's and the origin's.
        let allowed =
            addresses == 1 ? Self.tcpMaxPerClient + Self.proxyMaxPerClient : Self.tcpMax + Self.proxyMax
        let bound = baselineFiles + allowed + 16
        #expect(peakFiles <= bound, "descriptors peaked at \(peakFiles), caps allow \(bound)")
        #expect(peakFiles > baselineFiles, "the sample saw the connections")
        let growth = peakMemory - baselineMemory
        #expect(growth < 24 << 20, "resident memory grew by \(growth >> 20) MiB")
        _ = gate
    }
}

/// A DNS query framed for TCP.
enum RawQuery {
    static func framed(_ name: String) -> [UInt8] {
        var message: [UInt8] = [0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in name.split(separator: ".") {
            message.append(UInt8(label.utf8.count))
            message += Array(label.utf8)
        }
        message += [0, 0, 1, 0, 1]
        return [UInt8(message.count >> 8), UInt8(message.count & 0xFF)] + message
    }
}
