import Foundation
import TestSupport
import Testing

/// A query name carrying bytes a terminal or a report reader would act on (ESC and an SGR
/// sequence that hides text, BEL, CR, LF, a right-to-left override), asked by a real `dig`
/// under a blocked domain: the hit is written everywhere in the master-file presentation
/// form of RFC 1035 §5.1 (docs/sync.md#status-and-hits), on the parent's terminal and in the
/// API's reports alike, and no raw control byte reaches either.
@Suite(.serialized, .blocking) struct HostileNameTests {
    /// dig reads `\DDD` as one byte: ESC `[8m`, BEL, CR, LF, U+202E in UTF-8.
    static let asked = #"a\027[8m\007\013\010\226\128\174b.www.reddit.com"#
    /// What the gateway writes: the same presentation form (the name is lowercase already).
    static let shown = asked

    @Test func aNameWithControlBytesIsShownAndReportedEscaped() throws {
        let fixture = try SyncFixture()
        #expect(try fixture.register().status == 0)
        let gate = try fixture.run()
        defer { gate.daemon.stop() }
        #expect(fixture.eventually { gate.log.contains("event=policy_applied") }, "\(gate.log)")
        let answer = try gate.dig(Self.asked)
        #expect(answer.status == "NXDOMAIN", "\(answer)")

        var reported: [String] = []
        #expect(
            fixture.eventually(10) {
                reported = fixture.api.reports.filter { $0.reportType == "blocked_attempt" }
                    .flatMap { $0.payload["events"]?.array ?? [] }.compactMap { $0["domain"]?.string }
                return !reported.isEmpty
            })
        #expect(reported == [Self.shown], "reported: \(reported.map { $0.debugDescription })")
        #expect(!gate.log.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, "no raw byte in the log")

        gate.daemon.stop()
        for format in [["hits"], ["hits", "--json"]] {
            let hits = try GateCommand.run(format + ["--state-dir", fixture.state])
            #expect(hits.status == 0, "\(hits.stderr)")
            let output = hits.stdout
            #expect(
                output.contains(
                    format.count == 1 ? Self.shown : Self.shown.replacingOccurrences(of: #"\"#, with: #"\\"#)),
                "\(format): \(output.debugDescription)")
            #expect(
                !output.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x202E },
                "\(format): a raw control byte: \(output.debugDescription)")
            #expect(
                output.split(separator: "\n").count == 1, "\(format): one line, none forged: \(output.debugDescription)"
            )
        }
    }
}
