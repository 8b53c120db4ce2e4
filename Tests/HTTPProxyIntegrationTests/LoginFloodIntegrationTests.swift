import Foundation
import Locks
import SystemIO
import TestSupport
import Testing

/// Password guessing across addresses (docs/proxy.md#proxy-authentication): 200 loopback
/// addresses (each another device to the gateway) guess the proxy user `kid`'s password
/// for 20 s of the gateway's clock, 160 guesses a second together from eight at once,
/// while the child's own device, which has logged in as `kid` before, logs in with the
/// right password every two seconds. The guesses get no more answers than the per-user
/// limit allows; the child's device gets in at once. The gateway runs in the test's
/// process on a clock the test moves a second at a time, once each second's guesses are
/// answered.
@Suite(.serialized, .blocking) struct LoginFloodIntegrationTests {
    static let addresses = 200
    static let seconds = 20

    /// Checks the per-user limit allows in `seconds`: 10 as they come, then turns 1, 3, 7
    /// and 15 s after the tenth (the next is at 31 s).
    static let allowedGuesses = 10 + 4

    @Test func guessesFromTwoHundredAddressesAreHeldToThePerUserRateWhileTheKnownDeviceLogsIn() throws {
        let fixture = try ProxyFixture()
        let hashed = try GateCommand.run(["passwd"], stdin: "s3cret\n")
        try #require(hashed.status == 0, "\(hashed.stderr)")
        let hash = hashed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let config = try fixture.scratch.write(
            "auth.conf", "default_profile = none\n[profile kid]\nproxy_user = kid\nproxy_password = \(hash)\n")
        let gate = try fixture.startInProcess(ProxyFixture.policy(), ["--config", config])
        defer { gate.stop() }
        let page = "http://origin.test:\(fixture.origin.port)/"
        let known = "http://kid:s3cret@127.0.0.1:\(fixture.proxyPort)"
        let first = try Curl.run(["-x", known, page])
        try #require(first.status == 200, "the child's device logs in: \(first)")

        let statuses = Lock<[String: Int]>([:])
        let port = fixture.proxyPort
        let originPort = fixture.origin.port
        // The second of the gateway's clock; guesses sent and answered.
        let (clockSecond, sent, answered) = (Shared(0), Shared(0), Shared(0))
        let guessers = try (0..<8).map { thread in
            try SystemThread.spawn(name: "guesser") {
                while let attempt = Self.ticket(sent: sent, clockSecond: clockSecond) {
                    let address = "127.0.1.\(1 + (attempt * 8 + thread) % Self.addresses)"
                    let status = Self.guess(from: address, port: port, originPort: originPort, attempt: attempt)
                    statuses.withLock { $0[status, default: 0] += 1 }
                    answered.update { $0 += 1 }
                }
            }
        }
        var logins: [(Int, Double)] = []
        for second in 0..<Self.seconds {
            // Every two seconds, the child's device, among the guesses.
            if second % 2 == 1 {
                let (result, seconds) = try timed { try Curl.run(["-x", known, page]) }
                logins.append((result.status, seconds))
            }
            // This second's guesses all sent, each answered or still open at the gateway
            // waiting for a turn of the limit, no check running (a password check takes
            // real time): then the clock moves.
            #expect(
                waitUntil(timeout: .seconds(20)) {
                    sent.value >= (second + 1) * Self.perSecond && gate.loginChecksWaiting == 0
                        && answered.value + gate.openProxyConnections >= sent.value
                }, "second \(second): \(sent.value) sent, \(answered.value) answered")
            #expect(gate.advance(by: .seconds(1)), "\(gate.log)")
            clockSecond.update { $0 = second + 1 }
        }
        for guesser in guessers { guesser.join() }
        let counts = statuses.withLock { $0 }
        let rejected = counts["407", default: 0]
        // Every turn the limit gives is taken (a guess waits at each), none more; the
        // child's first login was one of the free checks.
        #expect(rejected == Self.allowedGuesses - 1, "\(rejected) guesses answered 407 in \(Self.seconds) s: \(counts)")
        #expect(counts["429", default: 0] > 0, "the rest are refused: \(counts)")
        #expect(logins.count >= 5)
        #expect(logins.allSatisfy { $0.0 == 200 && $0.1 < 1.5 }, "the known device logs in at once: \(logins)")
    }

    static let perSecond = 160

    /// The number of the next guess to send, once the gateway's clock has reached its
    /// second (`perSecond` a second, all guessers together); nil when all are sent.
    static func ticket(sent: Shared<Int>, clockSecond: Shared<Int>) -> Int? {
        var ticket: Int?
        _ = waitUntil(timeout: .seconds(30)) {
            let second = clockSecond.value
            return sent.update { count in
                guard count < seconds * perSecond else { return true }
                guard count < (second + 1) * perSecond else { return false }
                ticket = count
                count += 1
                return true
            }
        }
        return ticket
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
