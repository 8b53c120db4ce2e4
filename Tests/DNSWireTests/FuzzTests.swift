import DNSWire
import TestSupport
import Testing

/// Random and mutated packets through every entry point. A trap would kill the test
/// process, so passing means: errors only, never a crash. Where a parse succeeds, the
/// message must survive serialize → parse unchanged, and truncation must stay in bounds.
@Suite("Fuzz")
struct FuzzTests {
    static let iterations = 200_000
    /// Debug builds are slow; the budget keeps CI time bounded whatever the machine.
    static let budget = Duration.seconds(120)

    static let seeds: [[UInt8]] =
        Captured.all.flatMap { [$0.query, $0.response] } + [
            SVCBTests.https,
            TruncationTests.bigResponse(count: 5, leadingCNAME: true).serialized(),
            header(an: 1, ar: 1) + question(wire("a.example"), type: 64)
                + rr(
                    [0xC0, 12], type: 64,
                    rdata: hex(
                        "0010 03666f6f076578616d706c65036f726700 0000 0004 00010004 0001 0009 026832 0568332d3139 0004 0004 c0000201"
                    ))
                + optRR(options: u16(15) + u16(5) + [0, 15, 0x61, 0x64, 0x73]),
        ]

    @Test func randomAndMutatedPacketsNeverTrap() throws {
        var random = SeededGenerator(seed: 0x5EED_D115)
        let clock = ContinuousClock()
        let start = clock.now
        var stats = (runs: 0, parsed: 0, queries: 0)
        while stats.runs < Self.iterations, clock.now - start < Self.budget {
            let packet = Self.makePacket(&random, round: stats.runs)
            let outcome = try Self.exercise(packet)
            stats.runs += 1
            if outcome.parsed { stats.parsed += 1 }
            if outcome.query { stats.queries += 1 }
        }
        // Enough of the mutants must be valid for the round-trip checks to mean something.
        #expect(stats.runs >= 20_000)
        #expect(stats.parsed > stats.runs / 50, "parsed \(stats.parsed) of \(stats.runs)")
        #expect(stats.queries > 0)
    }

    static func makePacket(_ random: inout SeededGenerator, round: Int) -> [UInt8] {
        switch round % 4 {
        case 0:
            // Pure noise, usually dying at the header or count checks.
            return (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        case 1:
            // A plausible header over noise, to get past the cheap layers.
            let body = (0..<Int.random(in: 0...200, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            return header(
                flags: UInt16.random(in: 0...0xFFFF, using: &random), qd: UInt16.random(in: 0...2, using: &random),
                an: UInt16.random(in: 0...3, using: &random), ns: UInt16.random(in: 0...1, using: &random),
                ar: UInt16.random(in: 0...2, using: &random)) + body
        default:
            // A real message with a few bytes changed, cut or repeated.
            var packet = seeds[Int.random(in: 0..<seeds.count, using: &random)]
            for _ in 0..<Int.random(in: 1...4, using: &random) where !packet.isEmpty {
                let index = Int.random(in: 0..<packet.count, using: &random)
                switch UInt8.random(in: 0...5, using: &random) {
                case 0: packet[index] = UInt8.random(in: 0...255, using: &random)
                case 1: packet[index] ^= 1 << UInt8.random(in: 0...7, using: &random)
                case 2: packet[index] = [0x00, 0x3F, 0x40, 0xC0, 0xFF][Int.random(in: 0...4, using: &random)]
                case 3: packet.removeSubrange(index...)
                case 4: packet.insert(contentsOf: packet[index..<min(packet.count, index + 8)], at: index)
                default: packet.remove(at: index)
                }
            }
            return packet
        }
    }

    static func exercise(_ packet: [UInt8]) throws -> (parsed: Bool, query: Bool) {
        _ = try? DNSHeader(packet)
        let query = try? DNSQuery.parse(packet)
        _ = try? DNSPacket.minimumTTL(in: packet)
        _ = try? DNSPacket.removingECH(from: packet)
        _ = try? RData.SVCB(rdata: packet)
        var copy = packet
        _ = try? DNSPacket.decrementTTLs(in: &copy, by: 7, cap: 100)
        let message = try? DNSMessage.parse(packet)
        if let cut = try? DNSPacket.truncated(packet, maxSize: 256) {
            #expect(cut.count <= 256)
            // Truncation walks structure only, so it keeps bad RDATA it was given; from a
            // message that parses it must make one that parses.
            if message != nil { _ = try DNSMessage.parse(cut) }
        }
        guard let message else { return (false, query != nil) }
        let again = try DNSMessage.parse(message.serialized())
        #expect(again == message)
        let small = message.serialized(maxSize: 512)
        #expect(small.count <= 512)
        _ = try DNSMessage.parse(small)
        for edns in [message.edns].compactMap({ $0 }) { _ = try? edns.extendedErrors() }
        return (true, query != nil)
    }
}
