import Foundation
import Policy
import TestSupport
import Testing

@testable import Firewall

/// The text is what the real `nft` accepts: `nft -c -f -` parses it and has the kernel
/// check the whole transaction without committing it (nothing is changed). nftables comes
/// with `scripts/install-deps --test`; the check needs root (CAP_NET_ADMIN).
@Suite(.blocking) struct FirewallNftCheckTests {
    static let nft = ["/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// `nft -c -f -` of `script`: its exit status and what it said.
    static func check(_ script: String) throws -> (status: Int32, stderr: String) {
        guard let nft = Self.nft else {
            Issue.record("nft is not installed: run scripts/install-deps --test")
            return (1, "no nft")
        }
        let result = try Program.run(nft, ["-c", "-f", "-"], stdin: script)
        if result.status != 0, result.stderr.contains("Operation not permitted") {
            try Test.cancel("nft -c needs root (CAP_NET_ADMIN): \(result.stderr)")
        }
        return (result.status, result.stderr)
    }

    static let models: [(String, FirewallModel)] = [
        (
            "filtering default with exemptions",
            FirewallRulesetTests.model(
                FirewallRulesetTests.roster(
                    [
                        ("kid", ["02:00:00:00:00:0a", "10.0.0.0/8", "2001:db8::/48"]),
                        ("none", ["10.1.2.3", "02:00:00:00:00:99", "2001:db8::5"]),
                    ], defaultProfile: "kid"))
        ),
        (
            "default none",
            FirewallRulesetTests.model(
                FirewallRulesetTests.roster(
                    [("alice", ["198.51.100.10", "2001:db8:1::10"]), ("bob", ["02:00:5e:10:00:0b"])],
                    defaultProfile: "none"))
        ),
        (
            "everyone, empty sets, transparent, two interfaces",
            FirewallRulesetTests.model(
                .single(), interfaces: ["br-lan", "wlan*"], dns: RedirectPorts(v4: 53, v6: 5353),
                transparent: RedirectPorts(3129), doh: [])
        ),
        (
            "the parent's page on two ports",
            FirewallRulesetTests.model(.single(), interfaces: ["br-lan", "wlan*"], pagePorts: [8080, 8443])
        ),
        (
            "egress: web and open profiles, egress_allow with destinations of both families",
            FirewallModel(
                lanInterfaces: [InterfaceName("br-lan")!], dns: RedirectPorts(53), transparent: RedirectPorts(3129),
                roster: FirewallRulesetTests.roster(
                    [
                        ("kid", ["02:00:00:00:00:0a", "10.0.0.0/8", "2001:db8::/48"]),
                        ("teen", ["10.1.0.0/16", "02:00:00:00:00:0b"]), ("none", ["10.1.2.3"]),
                    ], defaultProfile: "none"),
                doh: [], egress: ["kid": .web, "teen": .open],
                egressAllow: ["tcp/993", "udp/3478-3481", "tcp/22@203.0.113.0/24", "udp/51820@2001:db8:9::/48"].map {
                    try! EgressRule.parse($0)
                })
        ),
    ]

    @Test(arguments: models.indices) func nftAcceptsTheTableAndTheApplyScript(_ index: Int) throws {
        let (name, model) = Self.models[index]
        let table = try Self.check(try Ruleset.text(model))
        #expect(table.status == 0, "\(name): \(table.stderr)")
        let apply = try Self.check(try Ruleset.applyScript(model))
        #expect(apply.status == 0, "\(name): \(apply.stderr)")
    }

    @Test func nftAcceptsTheRemoveScriptAndRefusesNonsense() throws {
        let remove = try Self.check(Ruleset.removeScript)
        #expect(remove.status == 0, "\(remove.stderr)")
        // The check is real: a broken table is refused.
        let broken = try Self.check("table inet phosra_gate {\n\tchain c {\n\t\tudp dport 99999 accept\n\t}\n}\n")
        #expect(broken.status != 0)
    }

    /// The built-in DoH list, whole, in a table nft accepts.
    @Test func nftAcceptsTheBuiltInDoHList() throws {
        let path = GateRun.checkout.appendingPathComponent("blocklists/doh-addresses.txt").path
        let entries = try DoHAddressList.parse(try String(contentsOfFile: path, encoding: .utf8), path: path)
        let model = FirewallRulesetTests.model(.single(), doh: entries.map(\.description))
        let result = try Self.check(try Ruleset.text(model))
        #expect(result.status == 0, "\(result.stderr)")
    }
}
