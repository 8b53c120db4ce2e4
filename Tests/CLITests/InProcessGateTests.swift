import Foundation
import GateHarness
import TestSupport
import Testing

/// The daemon run in the test's process (`GateHarness.InProcessGate`): the binary's own
/// `run` on a clock the test moves, with real clients on loopback. What the tests that
/// use it rely on: the loops' timers are the clock's (an idle DNS-over-TCP connection is
/// closed after `tcp_idle` of it, at once in real time), so is the control thread's
/// watch (a policy file changed is enforced), a signal delivered does what `kill` does,
/// and `stop` drains and ends the daemon, its state directory free again.
@Suite(.serialized, .blocking) struct InProcessGateTests {
    @Test func itAnswersFollowsItsClockTakesSignalsAndStops() throws {
        let scratch = try ScratchDirectory("pg-in-process")
        let policy = try scratch.write("policy.json", PolicyDocuments.json(blocked: ["reddit.com"]))
        let lists = GateRun.checkout.appendingPathComponent("blocklists").path
        let words = ["--policy", policy, "--upstream", "127.0.0.1:9", "--lists", lists]
        let gate = try InProcessGate(words, scratch: scratch)
        defer { gate.stop() }
        #expect(try gate.dig("www.reddit.com").extendedErrors.first?.hasPrefix("15 (Blocked)") == true)

        // tcp_idle (10 s) on the clock: a real 10 s would be past this wait's bound.
        let idle = try #require(LoopbackSocketFactory.connect(tcp: true, from: "127.0.0.1", to: gate.port, timeout: 5))
        defer { close(idle) }
        #expect(Self.askOverTCP(idle) > 12, "answered: the connection is the gateway's, its idle time running")
        #expect(gate.advance(by: .seconds(9)))
        #expect(!Self.closedByPeer(idle), "open before its idle time is up")
        #expect(gate.advance(by: .seconds(1.5)))
        #expect(waitUntil(timeout: .seconds(2)) { Self.closedByPeer(idle) }, "closed once it is")

        // The policy file changes; its watcher looks every half second of the clock.
        let replacement = try scratch.write(
            "policy.json.new", PolicyDocuments.json(blocked: ["reddit.com", "tiktok.com"], version: 4))
        #expect(rename(replacement, policy) == 0)
        #expect(gate.advance(by: 600_000_000), "\(gate.log)")
        #expect(
            gate.log.split(separator: "\n").contains { $0.contains("event=policy_loaded") && $0.contains("version=4") },
            "\(gate.log)")
        #expect(try gate.dig("www.tiktok.com").extendedErrors.first?.hasPrefix("15 (Blocked)") == true)

        // SIGHUP, delivered as `kill` would: the configuration read again.
        gate.signal(SIGHUP)
        #expect(waitUntil { gate.log.contains("event=reloaded") }, "\(gate.log)")

        // A DNS-over-TCP connection left open does not hold the stop.
        let open = try #require(LoopbackSocketFactory.connect(tcp: true, from: "127.0.0.1", to: gate.port, timeout: 5))
        defer { close(open) }
        #expect(gate.stop(), "\(gate.log)")
        #expect(gate.log.contains("event=draining") && gate.log.contains("event=stopped"), "\(gate.log)")
        // Stopped is gone: its UDP port is free to a socket that does not share it (the
        // daemon's share theirs), and its state directory to another daemon.
        #expect(FreePort.isFree(udp: gate.port), "the daemon's sockets were closed")
        let again = try InProcessGate(words, scratch: scratch, port: gate.port)
        #expect(again.stop(), "the state directory was let go")
    }

    /// Asks for www.reddit.com's A over `descriptor` (DNS over TCP); the answer's length.
    static func askOverTCP(_ descriptor: Int32) -> Int {
        var name: [UInt8] = []
        for label in ["www", "reddit", "com"] { name += [UInt8(label.utf8.count)] + Array(label.utf8) }
        let message: [UInt8] = [0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0] + name + [0, 0, 1, 0, 1]
        let framed = [UInt8(message.count >> 8), UInt8(message.count & 0xff)] + message
        guard send(descriptor, framed, framed.count, Int32(MSG_NOSIGNAL)) == framed.count else { return 0 }
        var head = [UInt8](repeating: 0, count: 2)
        guard recv(descriptor, &head, 2, Int32(MSG_WAITALL)) == 2 else { return 0 }
        var answer = [UInt8](repeating: 0, count: Int(head[0]) << 8 | Int(head[1]))
        return recv(descriptor, &answer, answer.count, Int32(MSG_WAITALL))
    }

    /// Whether the peer has closed `descriptor` (a read would give 0 bytes now).
    static func closedByPeer(_ descriptor: Int32) -> Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0
    }

    @Test func aConfigurationItCannotRunIsAnErrorWithTheLog() throws {
        let scratch = try ScratchDirectory("pg-in-process-bad")
        #expect {
            _ = try InProcessGate(["--policy", scratch.path("missing.json")], scratch: scratch)
        } throws: { error in
            "\(error)".contains("missing.json")
        }
    }
}
