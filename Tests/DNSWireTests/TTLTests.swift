import DNSWire
import Testing

@Suite("TTL rewriting in place")
struct TTLTests {
    func ttls(_ packet: [UInt8]) throws -> [UInt32] {
        var cursor = try DNSRecordCursor(packet)
        var result: [UInt32] = []
        while let record = try cursor.next(in: packet) {
            if record.type != .opt { result.append(record.ttl) }
        }
        return result
    }

    @Test func decrementsAndCapsEveryTTLButOPTs() throws {
        var packet = Captured.cname.response
        #expect(try ttls(packet) == [UInt32](repeating: 3600, count: 7))
        try DNSPacket.decrementTTLs(in: &packet, by: 100)
        #expect(try ttls(packet) == [UInt32](repeating: 3500, count: 7))
        try DNSPacket.decrementTTLs(in: &packet, by: 0, cap: 60)
        #expect(try ttls(packet) == [UInt32](repeating: 60, count: 7))
        try DNSPacket.decrementTTLs(in: &packet, by: 1000)
        #expect(try ttls(packet) == [UInt32](repeating: 0, count: 7))
        // Nothing but TTL bytes changed; the OPT record (last 11 bytes) is untouched.
        let before = try DNSMessage.parse(Captured.cname.response)
        var after = try DNSMessage.parse(packet)
        for index in after.answers.indices { after.answers[index].ttl = 3600 }
        for index in after.authorities.indices { after.authorities[index].ttl = 3600 }
        for index in after.additionals.indices { after.additionals[index].ttl = 3600 }
        #expect(after == before)
        #expect(packet.suffix(11) == Captured.cname.response.suffix(11))
    }

    @Test func staleAnswersGetAFixedTTL() throws {
        var packet = Captured.nxdomain.response
        try DNSPacket.rewriteTTLs(in: &packet) { _ in 30 }  // RFC 8767 §4
        #expect(try ttls(packet) == [30])
        #expect(try DNSMessage.parse(packet).authorities[0].rdata.soa?.minimum == 300)
    }

    @Test func topBitTTLsCountAsZero() throws {
        var packet =
            header(flags: 0x8180, an: 1) + question(wire("a"))
            + rr([0xC0, 12], type: 1, ttl: 0x8000_0010, rdata: [1, 2, 3, 4])
        #expect(try DNSPacket.minimumTTL(in: packet) == 0)
        try DNSPacket.decrementTTLs(in: &packet, by: 1)
        #expect(try ttls(packet) == [0])
    }

    @Test func minimumTTL() throws {
        #expect(try DNSPacket.minimumTTL(in: Captured.nxdomain.response) == 300)
        #expect(try DNSPacket.minimumTTL(in: Captured.a.response) == 3600)
        #expect(try DNSPacket.minimumTTL(in: Captured.a.query) == nil)  // only OPT
        #expect(try DNSPacket.minimumTTL(in: header(qd: 0)) == nil)
    }

    /// Found by the dns-answer fuzz target: a CNAME whose target is a pointer into another
    /// record's TTL field. Ageing that TTL in place would change the name behind it.
    @Test func aNameRunningThroughATTLFieldKeepsItsBytes() throws {
        let ttlAsLabel: UInt32 = 0x0361_6263  // length 3, "abc"; the RDLENGTH's high byte ends the name
        var packet =
            header(flags: 0x8180, an: 2) + question(wire("a"))
            + rr([0xC0, 12], type: 16, ttl: ttlAsLabel, rdata: [1, 0x78])
            + rr([0xC0, 12], type: 5, rdata: [0xC0, 25])
        #expect(try DNSMessage.parse(packet).answers[1].rdata.cnameTarget == name("abc"))
        try DNSPacket.decrementTTLs(in: &packet, by: 1)
        let aged = try DNSMessage.parse(packet)
        #expect(aged.answers[1].rdata.cnameTarget == name("abc"))
        #expect(aged.answers.map(\.ttl) == [ttlAsLabel - 1, 299])
    }

    @Test func aMalformedPacketIsLeftUnchanged() {
        var packet = Captured.a.response
        packet[packet.count - 11] = 0xFF  // the OPT owner becomes a pointer past the end
        let before = packet
        #expect(thrown { try DNSPacket.decrementTTLs(in: &packet, by: 5) } != nil)
        #expect(packet == before)
    }
}
