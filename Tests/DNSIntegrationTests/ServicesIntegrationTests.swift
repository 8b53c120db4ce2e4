import Foundation
import TestSupport
import Testing

/// Blocked apps through the real daemon (docs/services.md#blocked-apps): the DNS answer
/// says `service:<id>` in its Extended DNS Error and the hit carries it.
@Suite(.serialized, .blocking) struct ServicesIntegrationTests {
    @Test func aBlockedAppIsBlockedByDNSWithItsServiceAsTheReason() throws {
        let scratch = try ScratchDirectory("pg-services-dns")
        try scratch.write("lists/adult/list.txt", "adult.example\n")
        try scratch.write(
            "lists/services.json",
            """
            {"format": 1, "services": [
              {"id": "tiktok", "name": "TikTok", "kind": "social",
               "bundle_ids": {"ios": ["com.zhiliaoapp.musically"]},
               "domains": ["tiktok.com", "tiktokcdn.com"], "source": "test fixture"}]}
            """)
        let upstream = try DnsmasqUpstream(["--address=/example.test/192.0.2.1"])
        let policy = try scratch.write(
            "p.json", #"{"version": 2, "content_filter": {"blocked_apps": ["com.zhiliaoapp.musically"]}}"#)
        let gate = try GateRun(
            ["--policy", policy, "--lists", scratch.path("lists"), "--upstream", upstream.spec], scratch: scratch)
        let answer = try gate.dig("v16m.tiktokcdn.com")
        #expect(answer.status == "NXDOMAIN", "\(answer)")
        #expect(answer.extendedErrors == ["15 (Blocked): (service:tiktok)"], "\(answer)")
        #expect(try gate.dig("www.example.test").answerData == ["192.0.2.1"])
        gate.daemon.stop()
        let hits = try GateCommand.run(["hits", "--json", "--state-dir", gate.stateDirectory])
        #expect(hits.stdout.contains("\"reasons\":[\"service:tiktok\"]"), "\(hits.stdout)")
    }
}
