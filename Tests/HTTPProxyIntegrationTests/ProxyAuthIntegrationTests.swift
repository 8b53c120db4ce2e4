import Foundation
import TestSupport
import Testing

/// Proxy users choose their profile (docs/proxy.md#proxy-authentication), with real curl:
/// `kid` logs in and gets the kid's policy (reddit.com blocked); anonymous clients get
/// `default_profile = none`; a wrong password is a 407 with the Basic challenge; ten
/// failures in a minute, then 429 even for the right password; `proxy_auth = required`
/// sends anonymous clients a 407.
@Suite(.serialized, .blocking) struct ProxyAuthIntegrationTests {
    let fixture: ProxyFixture

    init() throws { fixture = try ProxyFixture() }

    func start(_ extra: [String] = []) throws -> GateRun {
        let hashed = try GateCommand.run(["passwd"], stdin: "s3cret\n")
        try #require(hashed.status == 0, "\(hashed.stderr)")
        let hash = hashed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let config = try fixture.scratch.write(
            "auth.conf",
            """
            default_profile = none
            [profile kid]
            proxy_user = kid
            proxy_password = \(hash)
            """)
        return try fixture.start(ProxyFixture.policy(), ["--config", config] + extra)
    }

    func proxy(_ credentials: String) -> String { "http://\(credentials)@127.0.0.1:\(fixture.proxyPort)" }

    var reddit: String { "http://www.reddit.com:\(fixture.origin.port)/" }

    @Test func aLoginChoosesTheProfile() throws {
        let gate = try start()
        defer { gate.daemon.stop() }
        let kid = try Curl.run(["-x", proxy("kid:s3cret"), reddit])
        #expect(kid.status == 403, "\(kid)")
        #expect(kid.output.contains("X-Phosra-Block: blocked_domain:reddit.com"))
        let tunnel = try Curl.run(["-p", "-x", proxy("kid:s3cret"), "https://www.reddit.com:\(fixture.origin.port)/"])
        #expect(tunnel.connectStatus == 403, "\(tunnel)")
        // Anonymous: default_profile = none, so the same site is fetched.
        let anonymous = try fixture.curl([reddit])
        #expect(anonymous.status == 200, "\(anonymous)")
        #expect(!gate.log.contains("s3cret"), "a password never reaches the log")
    }

    @Test func aWrongPasswordIs407AndTenAMinuteThen429() throws {
        let gate = try start()
        defer { gate.daemon.stop() }
        let wrong = try Curl.run(["-x", proxy("kid:guess"), reddit])
        #expect(wrong.status == 407, "\(wrong)")
        #expect(wrong.output.contains("Proxy-Authenticate: Basic realm=\"phosra-gate\""))
        let stranger = try Curl.run(["-x", proxy("mallory:s3cret"), reddit])
        #expect(stranger.status == 407)
        for _ in 0..<8 { _ = try Curl.run(["-x", proxy("kid:guess"), reddit]) }
        // Ten failures from this address: the right password waits for the minute too.
        let locked = try Curl.run(["-x", proxy("kid:s3cret"), reddit])
        #expect(locked.status == 429, "\(locked)")
        #expect(locked.output.contains("Retry-After: "))
        #expect(!gate.log.contains("s3cret") && !gate.log.contains("guess"))
    }

    @Test func requiredSendsAnonymousClientsA407() throws {
        let gate = try start(["--proxy-auth", "required"])
        defer { gate.daemon.stop() }
        let anonymous = try fixture.curl([reddit])
        #expect(anonymous.status == 407, "\(anonymous)")
        let kid = try Curl.run(["-x", proxy("kid:s3cret"), reddit])
        #expect(kid.status == 403, "\(kid)")
        // The PAC file needs no login.
        let pac = try Curl.run(["http://127.0.0.1:\(fixture.proxyPort)/proxy.pac"])
        #expect(pac.status == 200)
    }
}
