import Foundation
import Glibc
import TestSupport
import Testing

/// The firewall opens the parent's page only on the LAN (docs/network.md#the-firewall), in
/// network namespaces the test makes: a gateway with a LAN link (a device on
/// 198.51.100.10) and an internet link (a host on 203.0.113.10), plain listeners on every
/// address of the gateway at the page's ports and at another port, and the table
/// `phosra-gate firewall apply` loads. The LAN device and the gateway itself reach the
/// page's ports; the internet does not, and still reaches the other port. Addresses are
/// from the documentation ranges and exist only inside these namespaces.
@Suite(.serialized, .blocking) struct PageFirewallTests {
    @Test func thePagesPortsAreReachedFromTheLANOnly() throws {
        let net = try NetworkNamespaces.make(devices: 2)
        defer { net.remove() }
        let (gateway, device, internet) = (net.gateway, net.devices[0], net.devices[1])
        let scratch = try ScratchDirectory("pg-page-firewall")
        try net.run(in: gateway, ["link", "set", "lo", "up"])
        for (interface, peer, own, theirs) in [
            ("lan0", device, "198.51.100.1", "198.51.100.10"), ("wan0", internet, "203.0.113.1", "203.0.113.10"),
        ] {
            try net.run(in: gateway, ["link", "add", interface, "type", "veth", "peer", "name", "eth0", "netns", peer])
            try net.run(in: gateway, ["address", "add", "\(own)/24", "dev", interface])
            try net.run(in: gateway, ["link", "set", interface, "up"])
            try net.run(in: peer, ["link", "set", "lo", "up"])
            try net.run(in: peer, ["address", "add", "\(theirs)/24", "dev", "eth0"])
            try net.run(in: peer, ["link", "set", "eth0", "up"])
        }
        // Listeners on the wildcard: what a page on `web_listen = 0.0.0.0:8443` would be
        // reached on without the firewall, and another service of the gateway's.
        let ports: [UInt16] = [8443, 8080, 8444]
        let listeners = try net.inside(gateway) {
            try ports.map { try FirewallProbes.listener(Int32(SOCK_STREAM.rawValue), "0.0.0.0", $0) }
        }
        defer { for fd in listeners { close(fd) } }
        let config = try scratch.write(
            "phosra-gate.conf",
            """
            lan_interfaces = lan0
            dns_listen = 198.51.100.1:53
            state_dir = \(scratch.path("state"))
            lists = \(GateRun.checkout.appendingPathComponent("blocklists").path)
            web_listen = 0.0.0.0:8443
            """)
        func inGateway(_ words: [String]) throws -> (status: Int32, output: String) {
            let command = try net.exec(in: gateway, [GateRun.binary] + words)
            return try SpawnedServer.run([command.path] + command.arguments, logFile: scratch.path("command.out"))
        }
        func probe(from namespace: String, _ address: String, _ port: UInt16) throws -> FirewallProbes.Outcome {
            try net.inside(namespace) { FirewallProbes.tcp(address, port, milliseconds: 1000) }
        }

        let apply = try inGateway(["firewall", "apply", "--config", config])
        try #require(apply.status == 0, "\(apply.output)")
        for port in ports {
            #expect(try probe(from: device, "198.51.100.1", port) == .connected, "LAN, port \(port)")
            #expect(try probe(from: gateway, "127.0.0.1", port) == .connected, "loopback, port \(port)")
        }
        #expect(try probe(from: internet, "203.0.113.1", 8443) == .timedOut, "the page is not on the internet")
        #expect(try probe(from: internet, "203.0.113.1", 8080) == .timedOut, "nor its redirect")
        #expect(try probe(from: internet, "203.0.113.1", 8444) == .connected, "another service is untouched")

        #expect(try inGateway(["firewall", "remove"]).status == 0)
        #expect(try probe(from: internet, "203.0.113.1", 8443) == .connected, "the table was what dropped it")
    }
}
