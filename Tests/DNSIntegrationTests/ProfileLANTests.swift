import Foundation
import Glibc
import TestSupport
import Testing

/// A home LAN built in network namespaces (docs/configuration.md#profiles): the real
/// gateway in one namespace behind a bridge, three devices in others, each with its own
/// MAC address, and a dnsmasq upstream inside the gateway's namespace. Addresses are from
/// the documentation ranges (RFC 5737, RFC 3849) and exist only inside these namespaces.
/// The same name asked from each device gets each profile's answer, also over IPv6 from a
/// second, rotated address of the same device; an unknown MAC gets `default_profile`; a
/// MAC moved to another profile and SIGHUP move the device without a restart.
@Suite(.serialized, .blocking) struct ProfileLANTests {
    static let macs = ["02:00:5e:10:00:0a", "02:00:5e:10:00:0b", "02:00:5e:10:00:0c"]
    static let deviceV4 = ["198.51.100.10", "198.51.100.11", "198.51.100.12"]
    static let deviceV6 = ["2001:db8::a", "2001:db8::b", "2001:db8::c"]

    /// alice blocks reddit.com, bob blocks games.example, the third device is unknown.
    static func configuration(_ scratch: ScratchDirectory, aliceMAC: String = macs[0]) throws -> String {
        let alice = try scratch.write("alice.json", PolicyDocuments.json(blocked: ["reddit.com"]))
        let bob = try scratch.write("bob.json", PolicyDocuments.json(blocked: ["games.example"]))
        return """
            default_profile = none
            [profile alice]
            clients = \(aliceMAC)
            policy = \(alice)
            [profile bob]
            clients = \(macs[1])
            policy = \(bob)
            """
    }

    @Test func eachDeviceGetsItsProfileByMAC() throws {
        let lan = try NetworkNamespaces.make(devices: 3)
        defer { lan.remove() }
        try lan.run(in: lan.gateway, ["link", "set", "lo", "up"])
        try lan.run(in: lan.gateway, ["link", "add", "br0", "type", "bridge"])
        try lan.run(in: lan.gateway, ["address", "add", "198.51.100.1/24", "dev", "br0"])
        try lan.run(in: lan.gateway, ["-6", "address", "add", "2001:db8::1/64", "dev", "br0", "nodad"])
        try lan.run(in: lan.gateway, ["link", "set", "br0", "up"])
        for (index, device) in lan.devices.enumerated() {
            try lan.run(
                in: lan.gateway,
                ["link", "add", "lan\(index)", "type", "veth", "peer", "name", "eth0", "netns", device])
            try lan.run(in: lan.gateway, ["link", "set", "lan\(index)", "master", "br0"])
            try lan.run(in: lan.gateway, ["link", "set", "lan\(index)", "up"])
            try lan.run(in: device, ["link", "set", "eth0", "address", Self.macs[index]])
            try lan.run(in: device, ["address", "add", "\(Self.deviceV4[index])/24", "dev", "eth0"])
            try lan.run(in: device, ["-6", "address", "add", "\(Self.deviceV6[index])/64", "dev", "eth0", "nodad"])
            try lan.run(in: device, ["link", "set", "eth0", "up"])
            try lan.run(in: device, ["link", "set", "lo", "up"])
        }
        // alice's phone rotates its IPv6 privacy address.
        try lan.run(in: lan.devices[0], ["-6", "address", "add", "2001:db8::a2/64", "dev", "eth0", "nodad"])

        let scratch = try ScratchDirectory("pg-lan")
        let upstream = try lan.exec(
            in: lan.gateway,
            [
                "/usr/sbin/dnsmasq", "--keep-in-foreground", "--no-resolv", "--no-hosts", "--no-poll",
                "--conf-file=/dev/null", "--pid-file=", "--bind-interfaces", "--listen-address=127.0.0.1",
                "--port=5399", "--log-facility=-", "--local-ttl=300",
                "--host-record=www.reddit.com,192.0.2.21", "--host-record=games.example,192.0.2.22",
            ])
        // Spawned and reaped by hand (SpawnedServer), with their logs in files: these run
        // inside the gateway's namespace, so readiness is read from the log.
        let dnsmasq = try SpawnedServer(
            upstream.path, upstream.arguments, logFile: scratch.path("dnsmasq.log"),
            readyWhenLogContains: "started")
        defer { dnsmasq.kill() }
        let config = try scratch.write("phosra-gate.conf", try Self.configuration(scratch))
        let run = try lan.exec(
            in: lan.gateway,
            [
                GateRun.binary, "run", "--config", config, "--dns-listen", "198.51.100.1:53,[2001:db8::1]:53",
                "--upstream", "127.0.0.1:5399", "--state-dir", scratch.path("state"), "--timezone", "UTC",
                "--lists", GateRun.checkout.appendingPathComponent("blocklists").path, "--proxy-listen=",
                // Documentation ranges are not private: the LAN's must be allowed by name.
                "--allow-clients", "198.51.100.0/24,2001:db8::/64",
            ])
        let gate = try SpawnedServer(
            run.path, run.arguments, logFile: scratch.path("gate.log"), readyWhenLogContains: "event=listening")
        defer { gate.kill() }

        func ask(
            _ device: Int, _ name: String, server: String = "198.51.100.1", source: String? = nil
        ) throws
            -> DigAnswer
        {
            var words = ["dig", "@\(server)", name, "A", "+tries=3", "+time=2"]
            if let source { words += ["-b", source] }
            let dig = try lan.exec(in: lan.devices[device], words)
            return DigAnswer(
                output: try SpawnedServer.run([dig.path] + dig.arguments, logFile: scratch.path("dig.out")).output)
        }
        let reddit = ["15 (Blocked): (blocked_domain:reddit.com)"]
        let games = ["15 (Blocked): (blocked_domain:games.example)"]

        // The neighbour table may learn a device from its first query only when the answer
        // goes back: ask until the MAC has been seen (at most a few seconds).
        let aliceBlocked = try waitFor(timeout: 10_000_000_000, interval: 200_000_000) { () throws -> Bool? in
            try ask(0, "www.reddit.com").extendedErrors == reddit ? true : nil
        }
        #expect(aliceBlocked == true, "\(gate.log)")
        #expect(try ask(0, "games.example").answerData == ["192.0.2.22"])
        let bobBlocked = try waitFor(timeout: 10_000_000_000, interval: 200_000_000) { () throws -> Bool? in
            try ask(1, "games.example").extendedErrors == games ? true : nil
        }
        #expect(bobBlocked == true)
        #expect(try ask(1, "www.reddit.com").answerData == ["192.0.2.21"])
        // Unknown MAC: default_profile = none, unfiltered.
        #expect(try ask(2, "www.reddit.com").answerData == ["192.0.2.21"])
        #expect(try ask(2, "games.example").answerData == ["192.0.2.22"])

        // Over IPv6, from alice's first and from her rotated address: still alice.
        for source in ["2001:db8::a", "2001:db8::a2"] {
            let blocked = try waitFor(timeout: 10_000_000_000, interval: 200_000_000) { () throws -> Bool? in
                try ask(0, "www.reddit.com", server: "2001:db8::1", source: source).extendedErrors == reddit
                    ? true : nil
            }
            #expect(blocked == true, "from \(source)")
        }
        #expect(try ask(2, "www.reddit.com", server: "2001:db8::1").answerData == ["192.0.2.21"])

        // The parent moves alice's MAC to the third device's: SIGHUP, no restart.
        try Data(try Self.configuration(scratch, aliceMAC: Self.macs[2]).utf8).write(to: URL(fileURLWithPath: config))
        gate.signal(SIGHUP)
        let moved = try waitFor(timeout: 10_000_000_000, interval: 200_000_000) { () throws -> Bool? in
            try ask(2, "www.reddit.com").extendedErrors == reddit ? true : nil
        }
        #expect(moved == true, "\(gate.log)")
        #expect(try ask(0, "www.reddit.com").answerData == ["192.0.2.21"])
        #expect(gate.isRunning)
        #expect(gate.log.contains("event=reloaded"))

        // `status` lists each profile's devices by MAC: alice's phone, asked from three
        // addresses, is one device (the flush runs every 5 s).
        let devices = try waitFor(timeout: 15_000_000_000, interval: 500_000_000) {
            () throws -> [String: [String]]? in
            let status = try GateCommand.run(["status", "--state-dir", scratch.path("state"), "--json"])
            var devices: [String: [String]] = [:]
            for profile in try TestJSON.parse(Array(status.stdout.utf8))["profiles"]?.array ?? [] {
                devices[profile["profile"]?.string ?? "?"] =
                    (profile["devices_last_hour"]?.array ?? []).compactMap { $0["client"]?.string }.sorted()
            }
            return devices["alice"]?.contains(Self.macs[2]) == true ? devices : nil
        }
        #expect(devices?["alice"] == [Self.macs[0], Self.macs[2]], "\(String(describing: devices))")
        #expect(devices?["bob"] == [Self.macs[1]])
    }
}
