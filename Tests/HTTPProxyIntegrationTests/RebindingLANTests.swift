import Foundation
import Glibc
import TestSupport
import Testing

/// DNS rebinding through the proxy (docs/dns.md#what-answers-may-carry): a public name
/// whose answer is another LAN host's private address is refused with `local_destination`
/// and that host is never contacted; a name under `rebind_allow` (here a `local_forward`
/// zone) still reaches it. In network namespaces the test makes: a gateway on
/// 198.51.100.1 and 10.9.0.1, a device on 198.51.100.10 that is also the LAN host on
/// 10.9.0.10 with a web server there.
@Suite(.serialized, .blocking) struct RebindingLANTests {
    @Test func aPublicNameIsNotFollowedToAnotherLANHost() throws {
        let net = try NetworkNamespaces.make(devices: 1)
        var servers: [SpawnedServer] = []
        defer {
            for server in servers { server.kill() }
            net.remove()
        }
        let scratch = try ScratchDirectory("pg-rebinding-lan")
        let (gateway, device) = (net.gateway, net.device)
        try net.run(in: gateway, ["link", "set", "lo", "up"])
        try net.run(in: gateway, ["link", "add", "lan0", "type", "veth", "peer", "name", "eth0", "netns", device])
        try net.run(in: gateway, ["address", "add", "198.51.100.1/24", "dev", "lan0"])
        try net.run(in: gateway, ["address", "add", "10.9.0.1/24", "dev", "lan0"])
        try net.run(in: gateway, ["link", "set", "lan0", "up"])
        try net.run(in: device, ["link", "set", "lo", "up"])
        try net.run(in: device, ["address", "add", "198.51.100.10/24", "dev", "eth0"])
        try net.run(in: device, ["address", "add", "10.9.0.10/24", "dev", "eth0"])
        try net.run(in: device, ["link", "set", "eth0", "up"])

        let lanHost = try net.inside(device) {
            try TestHTTPServer(host: "10.9.0.10", port: 8080) { _ in .respond(.init(status: 200, text: "lan host\n")) }
        }
        defer { lanHost.stop() }
        let dnsmasq = try net.exec(
            in: gateway,
            [
                "/usr/sbin/dnsmasq", "--keep-in-foreground", "--no-resolv", "--no-hosts", "--conf-file=/dev/null",
                "--pid-file=", "--bind-interfaces", "--listen-address=127.0.0.1", "--port=5399", "--log-facility=-",
                "--local-ttl=300", "--host-record=rebind.test,10.9.0.10", "--host-record=nas.lan,10.9.0.10",
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
                "--local-forward", "lan=127.0.0.1:5399", "--state-dir", scratch.path("state"), "--timezone", "UTC",
                "--lists", GateRun.checkout.appendingPathComponent("blocklists").path,
                "--allow-clients", "198.51.100.0/24,127.0.0.0/8", "--connect-ports", "443,8080",
            ])
        servers.append(
            try SpawnedServer(
                run.path, run.arguments, logFile: scratch.path("gate.log"),
                readyWhenLogContains: "event=listening service=proxy tcp=198.51.100.1:3128"))

        func inDevice(_ command: [String], _ name: String) throws -> String {
            let spawned = try net.exec(in: device, command)
            return try SpawnedServer.run([spawned.path] + spawned.arguments, logFile: scratch.path("\(name).log"))
                .output
        }
        func curl(_ arguments: [String], _ name: String) throws -> String {
            try inDevice(["curl", "-sS", "-i", "--max-time", "8", "-x", "http://198.51.100.1:3128"] + arguments, name)
        }
        let plain = try curl(["http://rebind.test:8080/"], "plain-rebind")
        #expect(plain.hasPrefix("HTTP/1.1 403 Forbidden"), "plain HTTP: \(plain)")
        #expect(plain.contains("X-Phosra-Block: local_destination"), "plain HTTP: \(plain)")
        let tunnel = try curl(["-p", "http://rebind.test:8080/"], "connect-rebind")
        #expect(tunnel.contains("HTTP/1.1 403 Forbidden"), "CONNECT: \(tunnel)")
        #expect(tunnel.contains("X-Phosra-Block: local_destination"), "CONNECT: \(tunnel)")
        #expect(lanHost.connectionsAccepted == 0, "the LAN host was contacted for a public name")

        // The gateway's DNS gives the device no such answer either.
        let gatewayDig = try net.exec(
            in: gateway, ["dig", "@127.0.0.1", "-p", "5300", "rebind.test", "A", "+tries=1", "+time=4"])
        let answer = DigAnswer(
            output: try SpawnedServer.run([gatewayDig.path] + gatewayDig.arguments, logFile: scratch.path("dig.log"))
                .output)
        #expect(answer.answers.isEmpty && answer.extendedErrors == ["15 (Blocked): (local_destination)"], "\(answer)")

        // A LAN name (local_forward's zone, under rebind_allow) reaches the same host.
        let lan = try curl(["http://nas.lan:8080/"], "plain-lan")
        #expect(lan.hasPrefix("HTTP/1.1 200"), "nas.lan: \(lan)")
        #expect(lan.contains("lan host"), "nas.lan: \(lan)")
        #expect(lanHost.connectionsAccepted == 1)
    }
}
