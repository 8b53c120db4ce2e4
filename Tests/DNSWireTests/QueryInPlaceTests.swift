import DNSWire
import Testing

/// `DNSQuery.parseCommon` reads only what `parse` would read the same way: whenever it
/// gives a query, `parse` gives that query (options aside, which it checks but does not keep).
@Suite struct QueryInPlaceTests {
    /// `parseCommon`'s reading of `packet`, checked against `parse`'s.
    @discardableResult
    func agrees(_ packet: [UInt8], _ label: String = "") -> Bool {
        var storage: [UInt8] = []
        guard let common = packet.withUnsafeBytes({ DNSQuery.parseCommon($0, nameStorage: &storage) }) else {
            return false
        }
        guard var full = try? DNSQuery.parse(packet) else {
            Issue.record("parseCommon read a packet parse rejects: \(label) \(hexString(packet))")
            return true
        }
        full.edns?.options = []
        #expect(common == full, "\(label)")
        #expect(common.question.name.wire == full.question.name.wire, "the letter case kept: \(label)")
        return true
    }

    @Test func readsTheCommonQueries() {
        let cookie: [UInt8] = u16(10) + u16(8) + [1, 2, 3, 4, 5, 6, 7, 8]
        #expect(agrees(sampleQuery()))
        #expect(agrees(header() + question(wire("WWW.Example.com"), type: 28)))
        #expect(agrees(header(ar: 1) + question(wire("example.org")) + optRR(ttl: 0x8000, options: cookie)))
        #expect(agrees(header(ar: 1) + question([0], type: 2) + optRR()), "the root")
    }

    @Test func leavesTheRestToParse() {
        let options: [UInt8] = u16(10) + u16(9) + [1, 2, 3, 4, 5, 6, 7, 8]
        let others: [(String, [UInt8])] = [
            ("two questions", header(qd: 2) + question(wire("a")) + question(wire("b"))),
            ("an answer record", header(an: 1) + question(wire("a")) + rr([0xC0, 12], type: 1, rdata: [1, 2, 3, 4])),
            ("a record other than OPT", header(ar: 1) + question(wire("a")) + rr([0], type: 1, rdata: [1, 2, 3, 4])),
            ("an OPT not owned by the root", header(ar: 1) + question(wire("a")) + optRR(owner: wire("a"))),
            ("an option past its RDATA", header(ar: 1) + question(wire("a")) + optRR(options: options)),
            ("a pointer in the question", header() + [0xC0, 12] + u16(1) + u16(1)),
            ("trailing bytes", sampleQuery() + [0]),
        ]
        for (label, packet) in others { #expect(!agrees(packet, label), "\(label)") }
    }

    @Test func everyCutAndFlippedQueryAgreesOrIsLeftToParse() {
        for exchange in Captured.all {
            agrees(exchange.query, exchange.label)
            for length in 0..<exchange.query.count { agrees(Array(exchange.query[..<length]), exchange.label) }
            for position in exchange.query.indices {
                for bit in 0..<8 {
                    var flipped = exchange.query
                    flipped[position] ^= 1 << bit
                    agrees(flipped, "\(exchange.label) byte \(position) bit \(bit)")
                }
            }
        }
    }
}
