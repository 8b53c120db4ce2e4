import Foundation
import TestSupport
import Testing

/// The checks of ISC's EDNS compliance tester (`genreport`, not in Debian), made with dig
/// against the real binary whose upstream is an authoritative server (knotd: AA=1, RA=0),
/// as docs/dns.md#dnssec describes the answers: the header of a recursive server, an OPT
/// only for a query with one, version 0, DO copied, nothing else of the query's OPT echoed.
@Suite(
    .serialized, .blocking,
    .enabled(if: SignedZones.available, "needs knotd and keymgr (package knot: scripts/install-deps --test)"))
struct DNSComplianceIntegrationTests {
    let fixture: UpstreamFixture
    let zones: SignedZones
    let gate: GateRun

    init() throws {
        fixture = try UpstreamFixture()
        zones = try SignedZones(
            com: ["signed.com. A 198.51.100.7"],
            zones: [.init("google.com", signed: false, records: ["mail.google.com. A 198.51.100.2"])])
        gate = try fixture.start(PolicyDocuments.json(level: "light"), upstream: zones.spec)
    }

    func dig(_ options: [String], name: String = "signed.com", type: String = "A") throws -> DigAnswer {
        try gate.dig(name, type, options)
    }

    /// Lines of the OPT options dig prints for an answer.
    static let optionLines = ["; NSID", "; COOKIE", "; CLIENT-SUBNET", "; EXPIRE", "; OPT=", "; PADDING"]

    @Test func theHeaderIsARecursiveServersWhateverTheUpstreamSaid() throws {
        let authoritative = try Dig.query("signed.com", port: zones.port, options: ["+norec"])
        #expect(authoritative.flags.contains("aa") && !authoritative.flags.contains("ra"), "\(authoritative)")
        for pass in ["from the upstream", "from the cache"] {
            let answer = try dig(["+noedns"])
            #expect(answer.status == "NOERROR" && answer.answerData == ["198.51.100.7"], "\(pass): \(answer)")
            #expect(answer.flags.sorted() == ["qr", "ra", "rd"], "\(pass): \(answer)")
            #expect(answer.edns == nil, "no OPT for a query without one (RFC 6891 §7)")
        }
        #expect(try dig(["+noedns", "+norec"]).flags.sorted() == ["qr", "ra"], "RD copied")
        #expect(try dig(["+noedns", "+aaflag"]).flags.sorted() == ["qr", "ra", "rd"], "AA in a query means nothing")
        #expect(try dig(["+noedns", "+zflag"]).flags.sorted() == ["qr", "ra", "rd"], "Z is zero in answers")
        #expect(try dig(["+noedns", "+cdflag"]).flags.sorted() == ["cd", "qr", "ra", "rd"], "CD copied")
        let notImplemented = try dig(["+noedns", "+opcode=15"])
        #expect(notImplemented.status == "NOTIMP", "\(notImplemented)")
    }

    @Test func ednsAsTheComplianceTesterChecksIt() throws {
        let plain = try dig(["+edns=0", "+nocookie"])
        #expect(plain.status == "NOERROR" && plain.edns?.hasPrefix("version: 0,") == true, "\(plain)")
        #expect(plain.ednsFlags == [])
        let badVersion = try dig(["+edns=1", "+noednsneg", "+nocookie"])
        #expect(badVersion.status == "BADVERS" && badVersion.edns?.hasPrefix("version: 0,") == true, "\(badVersion)")
        let badVersionOption = try dig(["+edns=1", "+noednsneg", "+nocookie", "+ednsopt=100"])
        #expect(badVersionOption.status == "BADVERS", "\(badVersionOption)")
        let unknownFlag = try dig(["+ednsflags=0x40", "+nocookie"])
        #expect(unknownFlag.status == "NOERROR" && unknownFlag.ednsFlags == [], "\(unknownFlag)")
        #expect(!unknownFlag.output.contains("MBZ"), "an unknown EDNS flag is not echoed: \(unknownFlag)")
        let unknownOption = try dig(["+ednsopt=100", "+nocookie"])
        #expect(unknownOption.status == "NOERROR", "\(unknownOption)")
        #expect(!Self.optionLines.contains { unknownOption.output.contains($0) }, "\(unknownOption)")
        let options = try dig(["+nsid", "+subnet=0.0.0.0/0", "+expire", "+cookie"])
        #expect(options.status == "NOERROR" && options.answerData == ["198.51.100.7"], "\(options)")
        #expect(!Self.optionLines.contains { options.output.contains($0) }, "none echoed: \(options)")
        let dnssecOK = try dig(["+dnssec", "+nocookie"])
        #expect(dnssecOK.ednsFlags == ["do"], "DO copied (RFC 3225 §3): \(dnssecOK)")
        let overTCP = try dig(["+tcp", "+dnssec", "+nocookie"])
        #expect(overTCP.status == "NOERROR" && overTCP.ednsFlags == ["do"], "\(overTCP)")
    }

    /// DNSSEC's own records, as the zone gave them, only to a client that set DO
    /// (RFC 3225 §3): what a validator behind the gateway needs.
    @Test func dnssecRecordsPassThroughToAClientThatSetDO() throws {
        let keys = try dig(["+dnssec"], name: "com", type: "DNSKEY")
        #expect(keys.status == "NOERROR", "\(keys)\n\(gate.log)")
        #expect(
            keys.answers.contains { $0.contains("\tDNSKEY\t") } && keys.answers.contains { $0.contains("\tRRSIG\t") })
        let delegation = try dig(["+dnssec"], name: "com", type: "DS")
        #expect(delegation.answers.contains { $0.contains("\tDS\t") }, "from the root's zone: \(delegation)")
        let unsigned = try dig(["+dnssec"], name: "google.com", type: "DS")
        #expect(unsigned.status == "NOERROR" && unsigned.answers.isEmpty, "\(unsigned)")
        #expect(unsigned.authority.contains { $0.contains("\tNSEC\t") }, "the proof of no DS: \(unsigned)")
        let signed = try dig(["+dnssec"])
        #expect(signed.answers.contains { $0.contains("\tRRSIG\t") }, "\(signed)")
        let plain = try dig(["+nodnssec"])
        #expect(plain.answerData == ["198.51.100.7"], "no DO, no RRSIG: \(plain)")
    }
}
