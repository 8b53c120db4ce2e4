import Foundation
import TestSupport
import Testing

/// DNS-over-TLS upstreams (docs/dns.md#forwarding): unbound on loopback with a certificate from a test
/// CA. The right CA and name answer; a wrong name or an untrusted CA fail (SERVFAIL, and
/// the daemon logs why) — and nothing falls back to the system resolver.
@Suite(.serialized, .blocking) struct DNSOverTLSIntegrationTests {
    let fixture: UpstreamFixture
    let unbound: UnboundDoT

    init() throws {
        fixture = try UpstreamFixture()
        unbound = try UnboundDoT()
    }

    /// The daemon with `strace` attached to all its threads once it is ready, so a test can
    /// list every address it connected to and every file it opened while answering. Without
    /// strace (`scripts/install-deps --test` installs it), or where it may not attach, the
    /// test fails: a loopback check that passes unchecked proves nothing. strace detaches
    /// when stopped; the daemon is stopped by GateRun.
    private struct TracedGate {
        let gate: GateRun
        let tracer: ChildDaemon
        let traceFile: String

        func dig(_ name: String, _ type: String = "A") throws -> DigAnswer { try gate.dig(name, type) }
        var log: String { gate.log }

        /// `connect(2)` calls to IPv4/IPv6 addresses, and files opened, as strace printed them.
        var trace: (connects: [String], opened: [String]) {
            let text = (try? String(contentsOfFile: traceFile, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n").map(String.init)
            return (
                lines.filter { $0.contains("connect(") && $0.contains("AF_INET") },
                lines.filter { $0.contains("open") && $0.contains("\"") }
            )
        }
    }

    private struct TraceUnavailable: Error, CustomStringConvertible {
        let description: String
    }

    private func startTraced(upstream: String, _ extra: [String]) throws -> TracedGate {
        let strace = "/usr/bin/strace"
        guard FileManager.default.isExecutableFile(atPath: strace) else {
            throw TraceUnavailable(description: "\(strace) is missing: scripts/install-deps --test installs it")
        }
        let gate = try fixture.start(PolicyDocuments.json(), upstream: upstream, extra)
        let traceFile = fixture.scratch.path("trace-\(gate.port).txt")
        let tracer = try ChildDaemon(
            strace,
            [
                "-f", "-e", "trace=connect,open,openat", "-o", traceFile,
                "-p", "\(gate.daemon.pid)",
            ])
        // strace says "Process N attached with K threads" once it has seized every thread,
        // so from here on every system call of the daemon is in the trace.
        guard tracer.waitFor("Process \(gate.daemon.pid) attached", timeout: 5) else {
            tracer.stop()
            throw TraceUnavailable(description: "strace could not attach (ptrace not permitted?): \(tracer.stderr)")
        }
        return TracedGate(gate: gate, tracer: tracer, traceFile: traceFile)
    }

    /// Asserts that, while answering, the daemon reached nothing but loopback and never
    /// looked at the system resolver configuration.
    private func expectLoopbackOnly(_ gate: TracedGate) {
        let trace = gate.trace
        #expect(!trace.connects.isEmpty, "the trace shows the upstream connections")
        for line in trace.connects {
            #expect(line.contains("inet_addr(\"127.0.0.1\")") || line.contains("\"::1\""), "only loopback: \(line)")
        }
        #expect(
            !trace.opened.contains {
                $0.contains("/etc/resolv.conf") || $0.contains("nsswitch") || $0.contains("/etc/hosts")
            },
            "no system resolver: \(trace.opened.filter { $0.contains("/etc/") })")
    }

    @Test func aTLSUpstreamWithTheTestCAAnswers() throws {
        let gate = try fixture.start(
            PolicyDocuments.json(), upstream: unbound.spec(),
            ["--ca-file", unbound.certificates.caFile])
        let answer = try gate.dig("www.example.test")
        #expect(answer.status == "NOERROR", "\(answer)\n\(gate.log)\n\(unbound.log)")
        #expect(answer.answerData == [UnboundDoT.answer])
        // A second name over the same (reused) connection.
        #expect(try gate.dig("two.example.test", "A", ["+tcp"]).answerData == [UnboundDoT.answer])
        #expect(!gate.log.contains("event=upstream"), "no upstream failure logged: \(gate.log)")
    }

    /// A board that boots in the past (2020, before the certificate's validity begins:
    /// `faketime` shows OpenSSL that date too) with the floor persisted by its last run:
    /// the clock counts as not yet set, so the validity period is not checked and the TLS
    /// upstream answers. Without a floor the same clock is believed, and the certificate is
    /// refused as not yet valid.
    @Test(arguments: [true, false])
    func aBoardThatBootsInThePastStillReachesItsTLSUpstream(withFloor: Bool) throws {
        let state = fixture.scratch.path("floor-\(withFloor)")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        if withFloor {
            try fixture.scratch.write("floor-true/clock-floor", "\(Int(Date().timeIntervalSince1970))\n")
        }
        let policy = try fixture.scratch.write("floor-policy.json", PolicyDocuments.json())
        let port = FreePort.tcpAndUDP()
        // libfaketime preloaded through env(1), which execs (faketime(1) forks, and stopping
        // it would leave the daemon running). The same date for the daemon's own clock
        // (which also stands for a kernel that has not synchronised); the monotonic clock
        // stays real.
        let daemon = try ChildDaemon(
            "/usr/bin/env",
            [
                GateRun.binary, "run", "--policy", policy, "--lists", fixture.lists,
                "--upstream", unbound.spec(), "--ca-file", unbound.certificates.caFile, "--state-dir", state,
                "--dns-listen", "127.0.0.1:\(port)", "--proxy-listen=", "--timezone", "UTC",
            ],
            environment: GateRun.wallClock("2020-01-01T00:00:00Z").merging([
                "LD_PRELOAD": FakeWallClock.library, "FAKETIME": "@2020-01-01 00:00:00",
                "FAKETIME_DONT_FAKE_MONOTONIC": "1",
            ]) { $1 })
        defer { daemon.stop() }
        #expect(daemon.waitFor("event=listening", timeout: 20), "\(daemon.stderr)")
        let answer = try Dig.query("www.example.test", port: port)
        if withFloor {
            #expect(answer.status == "NOERROR", "\(answer)\n\(daemon.stderr)")
            #expect(answer.answerData == [UnboundDoT.answer])
            #expect(daemon.stderr.contains("event=clock_behind"), "\(daemon.stderr)")
        } else {
            #expect(answer.status == "SERVFAIL", "\(answer)")
            #expect(daemon.waitFor("not yet valid", timeout: 2), "\(daemon.stderr)")
        }
    }

    @Test func aCertificateWithTheWrongNameFails() throws {
        let gate = try startTraced(
            upstream: unbound.spec(name: "other.test"), ["--ca-file", unbound.certificates.caFile])
        let (answer, seconds) = try timed { try gate.dig("www.example.test") }
        #expect(answer.status == "SERVFAIL", "\(answer)")
        #expect(answer.answers.isEmpty)
        #expect(seconds < 2.5)
        #expect(
            gate.gate.daemon.waitFor("hostname mismatch", timeout: 2), "the verification failure is logged: \(gate.log)"
        )
        #expect(gate.log.contains("tls://127.0.0.1:\(unbound.port)#other.test"))
        expectLoopbackOnly(gate)
    }

    @Test(arguments: [false, true])
    func aCertificateFromAnUntrustedCAFails(withAnotherCAFile: Bool) throws {
        let extra = withAnotherCAFile ? ["--ca-file", unbound.certificates.otherCAFile] : []
        let gate = try startTraced(upstream: unbound.spec(), extra)
        let (answer, seconds) = try timed { try gate.dig("www.example.test") }
        #expect(answer.status == "SERVFAIL", "\(answer)")
        #expect(answer.answers.isEmpty)
        #expect(seconds < 2.5)
        #expect(gate.gate.daemon.waitFor("certificate verify failed", timeout: 2), "\(gate.log)")
        #expect(gate.log.contains("unable to get local issuer certificate"), "\(gate.log)")
        expectLoopbackOnly(gate)
    }
}
