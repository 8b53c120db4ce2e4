import Policy
import TestSupport
import Testing

@testable import Firewall

/// The table carries a hash of its own text as a comment (docs/doctor.md#firewall), so
/// `doctor` can tell the table in the kernel from the one the configuration makes now.
@Suite(.blocking) struct TableFingerprintTests {
    typealias R = FirewallRulesetTests
    static let family = R.roster([("kid", ["192.168.1.0/24"])], defaultProfile: "none")

    @Test func theTableCarriesAHashOfTheRestOfItsText() throws {
        let text = try Ruleset.text(R.model(Self.family))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let table = try #require(lines.firstIndex(of: "table inet phosra_gate {"))
        let fingerprint = try #require(TableFingerprint.find(in: text))
        #expect(lines[table + 1] == "\tcomment \"phosra-gate \(fingerprint)\"")
        var rest = lines
        rest.remove(at: table + 1)
        #expect(TableFingerprint.of(rest.dropLast().joined(separator: "\n")) == fingerprint)
        #expect(try Ruleset.fingerprint(R.model(Self.family)) == fingerprint)
    }

    /// Whatever the table holds changes the hash; the same model gives the same one.
    @Test func anyChangeOfTheModelChangesIt() throws {
        let base = try Ruleset.fingerprint(R.model(Self.family))
        #expect(try Ruleset.fingerprint(R.model(Self.family)) == base)
        let changes = [
            R.model(Self.family, interfaces: ["br-lan", "wlan0"]),
            R.model(Self.family, dns: RedirectPorts(5300)),
            R.model(Self.family, transparent: RedirectPorts(3129)),
            R.model(Self.family, doh: ["1.1.1.1"]),
            R.model(R.roster([("kid", ["192.168.1.0/25"])], defaultProfile: "none")),
            R.model(R.roster([("kid", ["192.168.1.0/24"])], defaultProfile: "kid")),
        ]
        let fingerprints = try changes.map { model throws(FirewallError) in try Ruleset.fingerprint(model) }
        #expect(Set(fingerprints + [base]).count == changes.count + 1)
    }

    /// As `nft list table` prints it: its own layout, the comment kept word for word.
    @Test func itIsFoundInWhatNftPrints() {
        let listing = """
            table inet phosra_gate {
            \tcomment "phosra-gate 0123456789abcdef"
            \tset filtered4 {
            \t\ttype ipv4_addr
            \t\tflags interval
            \t\telements = { 192.168.1.0/24 }
            \t}
            }
            """
        #expect(TableFingerprint.find(in: listing) == "0123456789abcdef")
        #expect(TableFingerprint.find(in: "table inet phosra_gate {\n}\n") == nil, "an older table has none")
        #expect(TableFingerprint.find(in: "\tcomment \"phosra-gate 0123\"\n") == nil, "too short")
        #expect(TableFingerprint.find(in: "\tcomment \"someone else\"\n") == nil)
    }
}
