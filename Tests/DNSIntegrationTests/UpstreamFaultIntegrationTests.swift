import Foundation
import TestSupport
import Testing

/// Faults around the DNS path (docs/dns.md#forwarding): an upstream that flaps between
/// silence, garbage, a reply with the wrong id and a right answer; a policy file replaced
/// by a half-written one. The daemon answers every query, never with what the upstream got
/// wrong, and blocks are counted exactly.
@Suite(.serialized, .blocking) struct UpstreamFaultIntegrationTests {
    let fixture: UpstreamFixture

    init() throws { fixture = try UpstreamFixture() }

    @Test func aFlappingUpstreamNeverLeaksGarbageAndEveryQueryIsAnswered() throws {
        let turn = Counter()
        let upstream = try FakeUDPUpstream { query in
            let id = FakeDNS.id(of: query)
            switch turn.increment() % 4 {
            case 1: return []  // silence
            case 2:
                return [
                    .send([UInt8(id >> 8), UInt8(id & 0xFF)] + (0..<40).map { UInt8(truncatingIfNeeded: $0 &* 37) })
                ]
            case 3: return [.send(FakeDNS.reply(to: query, addresses: ["192.0.2.66"], id: id ^ 0x0101))]
            default: return [.send(FakeDNS.reply(to: query, addresses: ["192.0.2.7"], ttl: 0))]
            }
        }
        let gate = try fixture.start(
            PolicyDocuments.json(blocked: ["blocked.example"]), upstream: upstream.spec,
            ["--cache-max-ttl", "0s", "--upstream-timeout", "300ms"])
        var blocked = 0
        for index in 0..<24 {
            let answer = try gate.dig("n\(index).example.test", "A", ["+tries=1", "+time=4"])
            #expect(answer.status == "NOERROR" || answer.status == "SERVFAIL", "\(index): \(answer)")
            if answer.status == "NOERROR" { #expect(answer.answerData == ["192.0.2.7"], "\(index): \(answer)") }
            let block = try gate.dig("x\(index).blocked.example", "A", ["+tries=1", "+time=4"])
            #expect(block.status == "NXDOMAIN", "\(index): \(block)")
            if block.status == "NXDOMAIN" { blocked += 1 }
        }
        #expect(gate.daemon.isRunning)
        gate.daemon.stop()
        let hits = try GateCommand.run(["hits", "--json", "--state-dir", gate.stateDirectory])
        let counted = hits.stdout.split(separator: "\n").compactMap { try? TestJSON.parse(String($0)) }
            .filter { ($0["domain"]?.string ?? "").hasSuffix("blocked.example") }.compactMap { $0["count"]?.int }
            .reduce(0, +)
        #expect(counted == blocked, "\(hits.stdout)")
    }

    @Test func aHalfWrittenPolicyFileKeepsTheLastGoodPolicyUntilItIsWhole() throws {
        let path = fixture.scratch.path("live.json")
        try PolicyDocuments.json(blocked: ["first.example"]).write(toFile: path, atomically: true, encoding: .utf8)
        let upstream = try DnsmasqUpstream(["--address=/example/192.0.2.1"])
        let gate = try GateRun(
            ["--policy", path, "--lists", fixture.lists, "--upstream", upstream.spec], scratch: fixture.scratch)
        #expect(try gate.dig("first.example").status == "NXDOMAIN")
        // An editor (or a copy) caught half way: the file written in place, cut short.
        let next = PolicyDocuments.json(blocked: ["second.example"], version: 4)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(next.utf8.prefix(next.utf8.count / 2)))
        #expect(gate.daemon.waitFor("event=policy_rejected", timeout: 3), "\(gate.log)")
        #expect(try gate.dig("first.example").status == "NXDOMAIN", "the last good policy still holds")
        #expect(try gate.dig("second.example").answerData == ["192.0.2.1"])
        // The rest of the file arrives: the new policy is enforced.
        try handle.write(contentsOf: Data(next.utf8.dropFirst(next.utf8.count / 2)))
        try handle.close()
        let enforced = waitUntil(timeout: .seconds(3)) { (try? gate.dig("second.example").status) == "NXDOMAIN" }
        #expect(enforced, "\(gate.log)")
        #expect(try gate.dig("first.example").answerData == ["192.0.2.1"])
    }
}
