import Foundation
import Glibc
import TestSupport
import Testing

/// The gateway's own LAN address is not a destination (docs/proxy.md#local-destinations),
/// in network namespaces the test makes: a gateway on 198.51.100.1 (a veth pair to a
/// device on 198.51.100.10) with a web server of its own on that address, and a device
/// that asks the proxy for it by address and by a name whose answer is that address.
@Suite(.serialized, .blocking) struct LocalDestinationLANTests {
    @Test func theGatewaysOwnAddressIs403AndNeverContacted() throws {
        let net = try NetworkNamespaces.make(devices: 1)
        var servers: [SpawnedServer] = []
        defer {
            for server in servers { server.kill() }
            net.remove()
        }
        let scratch = try ScratchDirectory("pg-local-lan")
        let (gateway, device) = (net.gateway, net.device)
        try net.run(in: gateway, ["link", "set", "lo", "up"])
        // Another address of the gateway's own, not the one devices reach the proxy on.
        try net.run(in: gateway, ["address", "add", "203.0.113.1/32", "dev", "lo"])
        try net.run(in: gateway, ["link", "add", "lan0", "type", "veth", "peer", "name", "eth0", "netns", device])
        try net.run(in: gateway, ["address", "add", "198.51.100.1/24", "dev", "lan0"])
        try net.run(in: gateway, ["link", "set", "lan0", "up"])
        try net.run(in: device, ["link", "set", "lo", "up"])
        try net.run(in: device, ["address", "add", "198.51.100.10/24", "dev", "eth0"])
        try net.run(in: device, ["link", "set", "eth0", "up"])

        // The gateway's own web server, which no device may reach through the proxy.
        let own = try net.inside(gateway) {
            try TestHTTPServer(host: "198.51.100.1", port: 8080) { _ in .respond(.init(status: 200, text: "own\n")) }
        }
        let other = try net.inside(gateway) {
            try TestHTTPServer(host: "203.0.113.1", port: 8080) { _ in .respond(.init(status: 200, text: "own\n")) }
        }
        defer {
            own.stop()
            other.stop()
        }
        let dnsmasq = try net.exec(
            in: gateway,
            [
                "/usr/sbin/dnsmasq", "--keep-in-foreground", "--no-resolv", "--no-hosts", "--conf-file=/dev/null",
                "--pid-file=", "--bind-interfaces", "--listen-address=127.0.0.1", "--port=5399", "--log-facility=-",
                "--host-record=lan.test,198.51.100.1", "--host-record=wan.test,203.0.113.1",
            ])
        servers.append(
            try SpawnedServer(
                dnsmasq.path, dnsmasq.arguments, logFile: scratch.path("dnsmasq.log"),
                readyWhenLogContains: "started, version"))
        let policy = try scratch.write("policy.json", PolicyDocuments.json(blocked: ["reddit.com"]))
        let run = try net.exec(
            in: gateway,
            [
                GateRun.binary, "run", "--policy", policy, "--dns-listen", "127.0.0.1:5300",
                "--proxy-listen", "198.51.100.1:3128", "--upstream", "127.0.0.1:5399",
                "--state-dir", scratch.path("state"), "--timezone", "UTC",
                "--lists", GateRun.checkout.appendingPathComponent("blocklists").path,
                // Documentation ranges are not private: allowed by name.
                "--allow-clients", "198.51.100.0/24", "--allow-ip-connect", "--connect-ports", "443,8080",
            ])
        servers.append(
            try SpawnedServer(
                run.path, run.arguments, logFile: scratch.path("gate.log"),
                readyWhenLogContains: "event=listening service=proxy tcp=198.51.100.1:3128"))

        func curl(_ arguments: [String], _ name: String) throws -> String {
            let command = try net.exec(
                in: device, ["curl", "-sS", "-i", "--max-time", "8", "-x", "http://198.51.100.1:3128"] + arguments)
            return try SpawnedServer.run([command.path] + command.arguments, logFile: scratch.path("\(name).log"))
                .output
        }
        for (name, url) in [
            ("address", "http://198.51.100.1:8080/"), ("name", "http://lan.test:8080/"),
            ("other address", "http://203.0.113.1:8080/"), ("other name", "http://wan.test:8080/"),
        ] {
            let plain = try curl([url], "plain-\(name)")
            #expect(plain.hasPrefix("HTTP/1.1 403 Forbidden"), "plain HTTP by \(name): \(plain)")
            #expect(plain.contains("X-Phosra-Block: local_destination"), "plain HTTP by \(name): \(plain)")
            let tunnel = try curl(["-p", url], "connect-\(name)")
            #expect(tunnel.contains("HTTP/1.1 403 Forbidden"), "CONNECT by \(name): \(tunnel)")
            #expect(tunnel.contains("X-Phosra-Block: local_destination"), "CONNECT by \(name): \(tunnel)")
        }
        servers.last?.signal(SIGTERM)
        _ = waitUntil(timeout: .seconds(5)) { !(servers.last?.isRunning ?? false) }
        #expect(own.connectionsAccepted == 0, "the gateway's own server was contacted")
        #expect(other.connectionsAccepted == 0, "the gateway's other server was contacted")
    }
}
