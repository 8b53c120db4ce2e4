import Foundation
import TestSupport
import Testing

/// SIGHUP re-reads configuration and lists; a bad configuration keeps the running one.
@Suite(.serialized, .blocking) struct ReloadIntegrationTests {
    @Test func sighupReloadsConfigurationAndLists() throws {
        let scratch = try ScratchDirectory()
        let policy = try scratch.write("p.json", PolicyDocuments.json(level: "light"))
        try scratch.write("lists/adult/list.txt", "adult.example\n")
        let config = try scratch.write("gate.conf", "upstream = 127.0.0.1:9\nblock_mode = nxdomain\n")
        let gate = try GateRun(
            ["--config", config, "--policy", policy, "--lists", scratch.path("lists")], scratch: scratch)
        #expect(try gate.dig("x.adult.example").status == "NXDOMAIN")
        #expect(try gate.dig("new.adult-two.example").status == "SERVFAIL")

        try scratch.write("gate.conf", "upstream = 127.0.0.1:9\nblock_mode = refused\n")
        try scratch.write("lists/adult/more.txt", "adult-two.example\n")
        gate.daemon.signal(SIGHUP)
        #expect(gate.daemon.waitFor("event=reloaded", timeout: 5))
        #expect(try gate.dig("x.adult.example").status == "REFUSED")
        #expect(try gate.dig("new.adult-two.example").status == "REFUSED")

        try scratch.write("gate.conf", "upstream = 127.0.0.1:9\nblock_mode = sometimes\n")
        gate.daemon.signal(SIGHUP)
        #expect(gate.daemon.waitFor("event=reload_failed", timeout: 5))
        #expect(gate.log.contains("block_mode: \\\"sometimes\\\" is not nxdomain"))
        #expect(try gate.dig("x.adult.example").status == "REFUSED", "the running configuration stays")
        gate.daemon.signal(SIGTERM)
        #expect(gate.daemon.waitForExit() == 0)
    }

    @Test func aBadConfigurationAtStartIsAnErrorExit() throws {
        let scratch = try ScratchDirectory()
        let policy = try scratch.write("p.json", PolicyDocuments.json())
        let config = try scratch.write("bad.conf", "\nrate_limit = lots\n")
        let daemon = try ChildDaemon(
            GateRun.binary, ["run", "--config", config, "--policy", policy, "--state-dir", scratch.path("s")])
        #expect(daemon.waitForExit() == 1)
        // The line can still be in the pipe when the process is gone.
        #expect(waitUntil(timeout: 5_000_000_000) { daemon.stderr.hasSuffix("\n") })
        #expect(daemon.stderr == "phosra-gate run: \(config):2: rate_limit: \"lots\" is not a whole number ≥ 0\n")
    }
}
