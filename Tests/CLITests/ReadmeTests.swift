import Config
import Foundation
import TestSupport
import Testing

@testable import Commands
@testable import Gateway

/// What the README promises is what ships: its commands run, the key table of
/// docs/configuration.md is complete, the example configuration parses.
@Suite(.blocking) struct ReadmeTests {
    static let readme =
        (try? String(contentsOf: GateProcess.checkout.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""

    /// The `sh` blocks of the "Set up" section: exactly two one-line commands.
    static var setupCommands: [String] {
        guard let start = readme.range(of: "## Set up"),
            let end = readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex)
        else { return [] }
        let section = readme[start.upperBound..<end.lowerBound]
        return section.components(separatedBy: "```sh\n").dropFirst().compactMap {
            $0.components(separatedBy: "\n```").first
        }
    }

    @Test func exactlyTwoOneLineSetupCommands() {
        let commands = Self.setupCommands
        #expect(commands.count == 2)
        #expect(commands.allSatisfy { !$0.contains("\n") })
        #expect(commands.last == "scripts/install-deps --test && swift test")
        let ci =
            (try? String(contentsOf: GateProcess.checkout.appendingPathComponent(".ci/run"), encoding: .utf8)) ?? ""
        #expect(ci.contains("'scripts/install-deps --test && swift test'"))
    }

    /// The main command as written, from the checkout, with only a free port, a scratch
    /// state directory and a dead upstream added (so nothing leaves loopback); then the
    /// README's `dig` lines for blocked and rewritten names. The example policy has a
    /// downtime (21:30–06:30) that would block every name, so the daemon's wall clock
    /// starts on a Tuesday at noon (UTC, the zone `GateRun` gives it): it passes at any hour.
    @Test func theMainCommandRunsAsWritten() throws {
        guard let main = Self.setupCommands.first, let range = main.range(of: ".build/release/phosra-gate run ") else {
            Issue.record("no main command")
            return
        }
        let arguments = main[range.upperBound...].split(separator: " ").map(String.init)
        let scratch = try ScratchDirectory()
        let gate = try GateRun(
            arguments + ["--upstream", "127.0.0.1:9"], scratch: scratch, cwd: GateProcess.checkout,
            environment: GateRun.wallClock("2026-12-01T12:00:00Z"))
        defer { gate.daemon.stop() }
        #expect(try gate.dig("www.reddit.com").extendedErrors == ["15 (Blocked): (blocked_domain:reddit.com)"])
        #expect(try gate.dig("pornhub.com").extendedErrors == ["15 (Blocked): (category:adult)"])
        #expect(Self.readme.contains("dig @127.0.0.1 -p 5300 www.reddit.com"))
        gate.daemon.signal(SIGTERM)
        #expect(gate.daemon.waitForExit() == 0)
        #expect(gate.log.contains("event=stopped"))
    }

    /// The other side of the test above: with the daemon's wall clock in the example
    /// policy's downtime, every name is blocked for `downtime` — so it is the test clock,
    /// not the hour the suite runs at, that decides.
    @Test func theExamplePolicysDowntimeFollowsTheTestClock() throws {
        let scratch = try ScratchDirectory()
        let night = GateRun.wallClock("2026-12-01T23:00:00Z")
        let gate = try GateRun(
            ["--policy", "examples/policy.json", "--upstream", "127.0.0.1:9"], scratch: scratch,
            cwd: GateProcess.checkout, environment: night)
        defer { gate.daemon.stop() }
        #expect(try gate.dig("www.example.com").extendedErrors == ["15 (Blocked): (downtime)"])
        let check = try GateProcess.run(
            [
                "check", "--policy", "examples/policy.json", "--timezone", "UTC", "--json",
                "www.example.com",
            ], cwd: GateProcess.checkout, environment: night)
        #expect(check.stdout.contains(#""reason":"downtime""#), "\(check.stdout)\(check.stderr)")
        let bad = try GateProcess.run(
            ["check", "--policy", "examples/policy.json", "a.example"], cwd: GateProcess.checkout,
            environment: GateRun.wallClock("tomorrow"))
        #expect(bad.status == 1)
        #expect(bad.stderr.hasPrefix("phosra-gate: PHOSRA_GATE_TEST_CLOCK: \"tomorrow\" is not an ISO 8601 time"))
    }

    /// The key table lives in docs/configuration.md: one `| \`key\` |` row per key.
    @Test func everyConfigKeyIsDocumented() {
        let path = GateProcess.checkout.appendingPathComponent("docs/configuration.md")
        let page = (try? String(contentsOf: path, encoding: .utf8)) ?? ""
        #expect(!page.isEmpty, "no docs/configuration.md")
        let rows = Self.keyRows(page)
        for key in Key.all {
            guard let row = rows[key.name] else {
                Issue.record("docs/configuration.md lacks \(key.name)")
                continue
            }
            // The reload column says what the declaration says: "yes" only for keys that
            // SIGHUP applies; "partly" is explained in the row.
            switch row.reload {
            case "yes": #expect(key.reloadable, "\(key.name): documented as reloaded, declared not")
            case "no", "partly": #expect(!key.reloadable, "\(key.name): declared reloadable, documented as not")
            default: break
            }
        }
        for name in rows.keys where Key.schema.named(name) == nil {
            Issue.record("docs/configuration.md documents \(name), which is not a key")
        }
    }

    /// The rows of the key table (`| key | type | default | reload | …`), by key name; `\|`
    /// inside a cell is a literal bar.
    static func keyRows(_ page: String) -> [String: (type: String, reload: String)] {
        var rows: [String: (type: String, reload: String)] = [:]
        var inTable = false
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("| key | type | default | reload |") {
                inTable = true
                continue
            }
            guard inTable else { continue }
            guard line.hasPrefix("|") else {
                inTable = false
                continue
            }
            let cells = line.replacingOccurrences(of: "\\|", with: "\u{0}").split(separator: "|")
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4, cells[0].hasPrefix("`") else { continue }
            rows[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = (cells[1], cells[3])
        }
        return rows
    }

    @Test func theExampleConfigurationParses() throws {
        let path = GateProcess.checkout.appendingPathComponent("examples/phosra-gate.conf").path
        let settings = try ConfigFile.load(path, schema: Key.schema)
        #expect(settings[Key.timezone] == "Europe/Berlin")
        #expect(settings[Key.alwaysAllow] == ["school.example.edu", "10.0.0.5"])
    }
}
