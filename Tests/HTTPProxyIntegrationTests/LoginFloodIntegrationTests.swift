import Foundation
import Locks
import TestSupport
import Testing

/// Password guessing across addresses (docs/proxy.md#proxy-authentication): 200 loopback
/// addresses (each another device to the gateway) guess the proxy user `kid`'s password
/// for 20 s, 160 guesses a second together, while the child's own device, which has logged
/// in as `kid` before, logs in with the right password every two seconds. The guesses get
/// no more answers than the per-user limit allows; the child's device gets in at once.
@Suite(.serialized, .blocking) struct LoginFloodIntegrationTests {
    static let addresses = 200
    static let seconds = 20

    /// 407s the per-user limit allows in `seconds`: 10 answered as they come, then turns
    /// 1, 3, 7 and 15 s after the tenth (the next is at 31 s).
    static let allowedGuesses = 10 + 4

    @Test func guessesFromTwoHundredAddressesAreHeldToThePerUserRateWhileTheKnownDeviceLogsIn() throws {
        let fixture = try ProxyFixture()
        let hashed = try GateCommand.run(["passwd"], stdin: "s3cret\n")
        try #require(hashed.status == 0, "\(hashed.stderr)")
        let hash = hashed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let config = try fixture.scratch.write(
            "auth.conf", "default_profile = none\n[profile kid]\nproxy_user = kid\nproxy_password = \(hash)\n")
        let gate = try fixture.start(ProxyFixture.policy(), ["--config", config])
        defer { gate.daemon.stop() }
        let page = "http://origin.test:\(fixture.origin.port)/"
        let known = "http://kid:s3cret@127.0.0.1:\(fixture.proxyPort)"
        let first = try Curl.run(["-x", known, page])
        try #require(first.status == 200, "the child's device logs in: \(first)")

        let statuses = Lock<[String: Int]>([:])
        let end = Date().addingTimeInterval(TimeInterval(Self.seconds))
        let port = fixture.proxyPort
        let originPort = fixture.origin.port
        let done = Lock(0)
        for thread in 0..<8 {
            Thread {
                var attempt = 0
                while Date() < end {
                    let address = "127.0.1.\(1 + (attempt * 8 + thread) % Self.addresses)"
                    let status = Self.guess(from: address, port: port, originPort: originPort, attempt: attempt)
                    statuses.withLock { $0[status, default: 0] += 1 }
                    attempt += 1
                    pause(50_000_000)
                }
                done.withLock { $0 += 1 }
            }.start()
        }
        var logins: [(Int, Double)] = []
        while Date() < end {
            pause(2_000_000_000)
            let (result, seconds) = try timed { try Curl.run(["-x", known, page]) }
            logins.append((result.status, seconds))
        }
        #expect(waitUntil(timeout: 20_000_000_000, interval: 100_000_000) { done.withLock { $0 } == 8 })
        let counts = statuses.withLock { $0 }
        let rejected = counts["407", default: 0]
        #expect(rejected <= Self.allowedGuesses, "\(rejected) guesses answered 407 in \(Self.seconds) s: \(counts)")
        // The first guesses reach the check: answered 407, or 503 when a check did not finish
        // in time (the password hash under the whole suite's load).
        #expect(rejected + counts["503", default: 0] >= 10, "the first guesses are answered: \(counts)")
        #expect(counts["429", default: 0] > 0, "the rest are refused: \(counts)")
        #expect(logins.count >= 5)
        #expect(logins.allSatisfy { $0.0 == 200 && $0.1 < 1.5 }, "the known device logs in at once: \(logins)")
    }

    /// One wrong guess from `address`: the status of the answer, or what went wrong.
    static func guess(from address: String, port: UInt16, originPort: UInt16, attempt: Int) -> String {
        guard let fd = LoopbackSocketFactory.connect(tcp: true, from: address, to: port, timeout: 15) else {
            return "no connection"
        }
        let client = ProxyClient(descriptor: fd, timeout: 15)
        let credentials = Data("kid:guess\(attempt)".utf8).base64EncodedString()
        client.send(
            "GET http://origin.test:\(originPort)/ HTTP/1.1\r\nHost: origin.test\r\n"
                + "Proxy-Authorization: Basic \(credentials)\r\n\r\n")
        let head = client.read(until: "\r\n")
        return head.split(separator: " ").dropFirst().first.map(String.init) ?? "no answer"
    }
}
