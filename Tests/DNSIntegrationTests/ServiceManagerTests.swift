import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

/// `run` under systemd's notify protocol (docs/configuration.md#systemd), with a real
/// `$NOTIFY_SOCKET` the test binds: READY=1 once the listeners answer, WATCHDOG=1 while
/// every loop thread answers, and no more once a loop is wedged (the test-only
/// `PHOSRA_GATE_TEST_WEDGE` makes SIGUSR2 wedge loop 0).
@Suite(.serialized, .blocking) struct ServiceManagerTests {
    /// A bound `AF_UNIX` datagram socket collecting what the daemon sends.
    final class NotifySocket: @unchecked Sendable {
        // Sendable: the path and descriptor are immutable; the test reads it from one thread.
        let path: String
        private let fd: Int32

        init(path: String) throws {
            self.path = path
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard bound == 0 else { throw SpawnedServerError(message: "bind \(path): errno \(errno)") }
            var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        /// The messages that arrive within `seconds`.
        func messages(for seconds: Double) -> [String] {
            let clock = ContinuousClock()
            let end = clock.now + .milliseconds(Int(seconds * 1000))
            var received: [String] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while clock.now < end {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count > 0 { received.append(String(decoding: buffer[0..<count], as: UTF8.self)) }
            }
            return received
        }

        /// Messages until one contains `text` (that one included), at most `seconds`.
        func messages(until text: String, seconds: Double) -> [String] {
            var received: [String] = []
            let clock = ContinuousClock()
            let end = clock.now + .milliseconds(Int(seconds * 1000))
            while clock.now < end, !received.contains(where: { $0.contains(text) }) {
                received += messages(for: 0.1)
            }
            return received
        }
    }

    @Test func readyAfterTheListenersAnswerAndTheWatchdogOnlyWhileEveryLoopAnswers() throws {
        let scratch = try ScratchDirectory("pg-notify")
        let notify = try NotifySocket(path: scratch.path("notify.sock"))
        let policy = try scratch.write("policy.json", PolicyDocuments.json(blocked: ["reddit.com"]))
        let gate = try GateRun(
            [
                "--policy", policy, "--lists", GateRun.checkout.appendingPathComponent("blocklists").path,
                "--upstream", "127.0.0.1:9",
            ], scratch: scratch, waitReady: false,
            environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "400000", "PHOSRA_GATE_TEST_WEDGE": "1"])
        defer { gate.daemon.stop() }

        let first = notify.messages(until: "READY=1", seconds: 20)
        let ready = first.first { $0.contains("READY=1") }
        #expect(ready != nil, "no READY=1: \(first)\n\(gate.log)")
        #expect(ready?.contains("STATUS=filtering 1 profile; DNS on 127.0.0.1:\(gate.port)") == true, "\(first)")
        // Sent only once the listeners were up: they answer now, without a retry.
        #expect(
            try gate.dig("www.reddit.com", "A", ["+tries=1", "+time=1"]).extendedErrors == [
                "15 (Blocked): (blocked_domain:reddit.com)"
            ])

        // A quarter of 0.4 s between pings while healthy.
        let healthy = notify.messages(for: 1.2).filter { $0 == "WATCHDOG=1" }
        #expect(healthy.count >= 4, "\(healthy.count) pings in 1.2 s")

        gate.daemon.signal(SIGUSR2)
        #expect(gate.daemon.waitFor("event=test_wedge", timeout: 5), "\(gate.log)")
        _ = notify.messages(for: 0.3)  // a ping already on its way
        let wedged = notify.messages(for: 1.5).filter { $0 == "WATCHDOG=1" }
        #expect(wedged.isEmpty, "pinged \(wedged.count) times with loop 0 wedged")
        #expect(gate.daemon.isRunning)
    }
}
