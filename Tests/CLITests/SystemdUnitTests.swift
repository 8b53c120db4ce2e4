import Config
import Foundation
import TestSupport
import Testing

@testable import Gateway

/// The units in `systemd/` (docs/configuration.md#systemd), checked by systemd's own tools:
/// `systemd-analyze verify` clean, the daemon's sandbox at an exposure of at most 1.5, and
/// CAP_NET_ADMIN (the right to rewrite the firewall) only in the firewall's unit.
@Suite(.blocking) struct SystemdUnitTests {
    static let units = [
        "phosra-gate.service", "phosra-gate-firewall.service", "phosra-gate-egress-watch.service",
        "phosra-gate-update.service", "phosra-gate-update.timer",
    ]
    static var directory: URL { GateRun.checkout.appendingPathComponent("systemd") }

    func analyze(_ arguments: [String], in directory: String) throws -> ProgramOutput {
        try Program.run("/usr/bin/systemd-analyze", arguments, directory: URL(fileURLWithPath: directory))
    }

    /// verify checks that each command exists: the units go to a scratch folder with the
    /// binary's installed path pointing at the one just built.
    @Test func everyUnitVerifiesClean() throws {
        let scratch = try ScratchDirectory("pg-units")
        for unit in Self.units {
            let text = try String(contentsOf: Self.directory.appendingPathComponent(unit), encoding: .utf8)
            try scratch.write(unit, text.replacingOccurrences(of: "/usr/bin/phosra-gate", with: GateRun.binary))
        }
        let result = try analyze(["verify"] + Self.units.map { "./\($0)" }, in: scratch.path)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    /// The daemon cannot change the firewall. The table's unit is a oneshot that runs no
    /// process, so no crash can remove the table; the watch, bound to it, makes the
    /// directory the daemon reads the refused egress attempts from, at the key's default path.
    @Test func onlyTheFirewallsUnitMayChangeTheFirewall() throws {
        func lines(_ unit: String) throws -> [Substring] {
            let text = try String(contentsOf: Self.directory.appendingPathComponent(unit), encoding: .utf8)
            return text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        }
        let daemon = try lines("phosra-gate.service")
        #expect(!daemon.contains { $0.contains("CAP_NET_ADMIN") }, "\(daemon)")
        #expect(daemon.contains("CapabilityBoundingSet=CAP_NET_BIND_SERVICE"))
        let firewall = try lines("phosra-gate-firewall.service")
        #expect(firewall.contains("Type=oneshot") && firewall.contains("RemainAfterExit=yes"), "\(firewall)")
        #expect(firewall.contains { $0.hasPrefix("ExecStart=") && $0.contains(" firewall apply ") })
        #expect(firewall.contains { $0.hasPrefix("ExecStop=") && $0.hasSuffix(" firewall remove") })
        #expect(!firewall.contains { $0.contains(" firewall watch ") || $0.hasPrefix("ExecStopPost=") })
        let watch = try lines("phosra-gate-egress-watch.service")
        #expect(watch.contains { $0.hasPrefix("ExecStart=") && $0.contains(" firewall watch ") })
        #expect(watch.contains("BindsTo=phosra-gate-firewall.service") && watch.contains("Restart=on-failure"))
        #expect(!watch.contains { $0.contains(" firewall remove") }, "a watch's end never removes the table")
        let runtime = watch.first { $0.hasPrefix("RuntimeDirectory=") }?.dropFirst("RuntimeDirectory=".count)
        let settings = try ConfigFile.parse("", path: "empty.conf", schema: Key.schema)
        #expect("/run/\(runtime ?? "")/egress-attempts" == settings[Key.egressAttempts])
    }

    @Test func theDaemonsSandboxScoresAtMostOnePointFive() throws {
        let limits = [
            "phosra-gate.service": 1.5, "phosra-gate-update.service": 1.5, "phosra-gate-firewall.service": 2.0,
            "phosra-gate-egress-watch.service": 2.0,
        ]
        for (unit, limit) in limits.sorted(by: { $0.key < $1.key }) {
            let result = try analyze(["security", "--offline=true", unit], in: Self.directory.path)
            let line = result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level for \(unit):") }
            let score = line.flatMap { text in
                text.split(separator: " ").compactMap { Double($0) }.last
            }
            #expect(score != nil, "\(result.stdout)\(result.stderr)")
            #expect((score ?? 10) <= limit, "\(unit): \(line ?? "")")
        }
    }
}
