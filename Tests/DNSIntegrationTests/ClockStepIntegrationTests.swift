import Foundation
import TestSupport
import Testing

/// The wall clock stepped a day forward and back under the running daemon (libfaketime
/// reading its offset from a file; the monotonic clock is left alone): decisions follow
/// the new wall clock at once, the daemon keeps answering, and each blocked query is
/// counted once (docs/decisions.md#time-rules).
@Suite(.serialized, .blocking) struct ClockStepIntegrationTests {
    @Test func stepsOfADayForwardAndBackAreFollowedAtOnce() throws {
        try #require(FakeWallClock.isInstalled, "libfaketime (Debian faketime)")
        let scratch = try ScratchDirectory("pg-clock-step")
        try scratch.write("lists/adult/list.txt", "adult.example\n")
        let upstream = try DnsmasqUpstream(["--address=/example.test/192.0.2.1"])
        // Downtime all of tomorrow (UTC), and only then.
        let names = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
        let tomorrow = names[(Calendar(identifier: .gregorian).component(.weekday, from: Date()) % 7)]
        let screenTime =
            #""daily_limit_minutes": 0, "downtime_windows": [{"start_time": "", "end_time": "", "#
            + #""days_of_week": ["\#(tomorrow)"]}]"#
        let policy = try scratch.write("p.json", PolicyDocuments.json(screenTime: screenTime))
        let clock = try FakeWallClock(scratch)
        let gate = try GateRun(
            ["--policy", policy, "--lists", scratch.path("lists"), "--upstream", upstream.spec], scratch: scratch,
            environment: clock.environment)
        func dig(_ name: String, _ options: [String] = []) throws -> DigAnswer { try gate.dig(name, "A", options) }
        defer { gate.daemon.stop() }
        #expect(try dig("www.example.test").answerData == ["192.0.2.1"], "today: allowed")

        var blocked = 0
        for (step, inDowntime) in [("+1d", true), ("+0", false), ("-1d", false), ("+1d", true)] {
            clock.step(step)
            let followed = waitUntil(timeout: .seconds(3)) {
                let answer = try? dig("www.example.test")
                return inDowntime
                    ? answer?.extendedErrors.contains { $0.contains("downtime") } ?? false
                    : answer?.answerData == ["192.0.2.1"]
            }
            #expect(followed, "wall clock \(step): \(inDowntime ? "downtime" : "allowed")\n\(gate.log)")
            // Counted, and the daemon keeps answering without a pause.
            for _ in 0..<3 {
                let answer = try dig("count.example.test", ["+tries=1", "+time=2"])
                #expect(answer.status != nil, "answered after \(step)")
                if inDowntime, answer.status == "NXDOMAIN" { blocked += 1 }
            }
        }
        #expect(blocked == 6, "three blocked queries in each downtime step")
        gate.daemon.stop()
        let hits = try GateCommand.run(["hits", "--json", "--state-dir", gate.stateDirectory])
        let counted = hits.stdout.split(separator: "\n").compactMap { try? TestJSON.parse(String($0)) }
            .filter { $0["domain"]?.string == "count.example.test" }.compactMap { $0["count"]?.int }.reduce(0, +)
        #expect(counted == blocked, "\(hits.stdout)")
    }
}
