import DomainMatch
import Glibc
import Neighbours
import TestSupport
import Testing

typealias NL = NetlinkBytes

@Suite(.blocking) struct NeighbourDumpTests {
    let phone = [UInt8]([0x02, 0x00, 0x5E, 0x10, 0x00, 0x01])
    let laptop = [UInt8]([0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF])
    let v4: [UInt8] = [198, 51, 100, 7]
    /// 2001:db8::a
    let v6: [UInt8] = [0x20, 0x01, 0x0D, 0xB8] + [UInt8](repeating: 0, count: 11) + [0x0A]

    func read(_ datagrams: [UInt8]..., sequence: UInt32 = 7) throws -> NeighbourDumpReader {
        var reader = NeighbourDumpReader(sequence: sequence)
        for datagram in datagrams {
            try datagram.withUnsafeBytes { try reader.read($0) }
        }
        return reader
    }

    @Test func requestIsAGetNeighDumpOfEveryFamily() {
        var expected: [UInt8] = []
        NL.append(&expected, UInt32(28))
        NL.append(&expected, NL.rtmGetNeigh)
        NL.append(&expected, NL.nlmFRequest | NL.nlmFDump)
        NL.append(&expected, UInt32(0x1234_5678))
        NL.append(&expected, UInt32(0))
        expected += [UInt8](repeating: 0, count: 12)  // ndmsg, family AF_UNSPEC
        #expect(NeighbourDump.request(sequence: 0x1234_5678) == expected)
    }

    @Test func multipartDumpAcrossDatagrams() throws {
        let first =
            NL.neighbour(family: NL.afInet, address: v4, mac: phone)
            + NL.neighbour(family: NL.afInet6, address: v6, mac: phone, state: NL.nudStale)
        let second =
            NL.neighbour(family: NL.afInet, address: [198, 51, 100, 8], mac: laptop, state: NL.nudPermanent)
            + NL.done()
        var reader = NeighbourDumpReader(sequence: 7)
        try first.withUnsafeBytes { try reader.read($0) }
        #expect(!reader.isComplete)
        try second.withUnsafeBytes { try reader.read($0) }
        #expect(reader.isComplete)
        #expect(
            reader.neighbours == [
                Neighbour(address: IPAddress("198.51.100.7")!, mac: MACAddress("02:00:5e:10:00:01")!),
                Neighbour(address: IPAddress("2001:db8::a")!, mac: MACAddress("02:00:5e:10:00:01")!),
                Neighbour(address: IPAddress("198.51.100.8")!, mac: MACAddress("aa:bb:cc:dd:ee:ff")!),
            ])
        #expect(reader.skipped == 0)
    }

    @Test(arguments: [NL.nudReachable, NL.nudStale, NL.nudDelay, NL.nudProbe, NL.nudPermanent])
    func confirmedStatesAreKept(state: UInt16) throws {
        let reader = try read(NL.neighbour(family: NL.afInet6, address: v6, mac: phone, state: state) + NL.done())
        #expect(reader.neighbours.map(\.mac) == [MACAddress(octets: phone)!])
    }

    @Test(arguments: [0, NL.nudIncomplete, NL.nudFailed, NL.nudNoarp, NL.nudNoarp | NL.nudPermanent])
    func unconfirmedStatesAreSkipped(state: UInt16) throws {
        let reader = try read(NL.neighbour(family: NL.afInet, address: v4, mac: phone, state: state) + NL.done())
        #expect(reader.neighbours.isEmpty)
        #expect(reader.skipped == 1)
        #expect(reader.isComplete)
    }

    @Test func entriesWithoutAnEthernetAddressOrOfAnotherFamilyAreSkipped() throws {
        let infiniband = [UInt8](repeating: 0x11, count: 20)
        let reader = try read(
            NL.neighbour(family: NL.afInet, address: v4, mac: nil)
                + NL.neighbour(family: NL.afInet, address: v4, mac: [])
                + NL.neighbour(family: NL.afInet6, address: v6, mac: infiniband)
                + NL.neighbour(family: NL.afInet, address: v4, mac: Array(phone.prefix(5)))
                + NL.neighbour(family: NL.afBridge, address: [], mac: phone)
                + NL.message(
                    type: NL.rtmNewNeigh,
                    payload: NL.ndmsg(
                        family: NL.afInet, state: NL.nudReachable, attributes: [NL.attribute(NL.ndaLladdr, phone)]))
                + NL.neighbour(family: NL.afInet, address: v4, mac: laptop)
                + NL.done())
        #expect(reader.neighbours == [Neighbour(address: IPAddress("198.51.100.7")!, mac: MACAddress(octets: laptop)!)])
        #expect(reader.skipped == 6)
    }

    @Test func otherSequencesNoopsAndOtherTypesAreIgnored() throws {
        let reader = try read(
            NL.neighbour(family: NL.afInet, address: v4, mac: laptop, sequence: 6)
                + NL.done(sequence: 6)
                + NL.message(type: NL.nlmsgNoop, payload: [])
                + NL.message(type: 24, payload: [UInt8](repeating: 0, count: 12))  // RTM_NEWROUTE
                + NL.neighbour(family: NL.afInet, address: v4, mac: phone)
                + NL.done()
                + NL.neighbour(family: NL.afInet6, address: v6, mac: laptop))
        #expect(reader.neighbours == [Neighbour(address: IPAddress("198.51.100.7")!, mac: MACAddress(octets: phone)!)])
        #expect(reader.isComplete)
    }

    @Test func attributeTypeFlagsAreMaskedAndUnpaddedEndsAccepted() throws {
        // NLA_F_NET_BYTEORDER (1 << 14) on NDA_DST; the last message and attribute unpadded.
        let payload = NL.ndmsg(
            family: NL.afInet, state: NL.nudStale,
            attributes: [NL.attribute(NL.ndaDst | 0x4000, v4), Array(NL.attribute(NL.ndaLladdr, phone).prefix(10))])
        let message = NL.message(type: NL.rtmNewNeigh, payload: payload, pad: false)
        #expect(message.count % 4 != 0)
        let reader = try read(NL.done(sequence: 99) + message)
        #expect(reader.neighbours == [Neighbour(address: IPAddress("198.51.100.7")!, mac: MACAddress(octets: phone)!)])
        #expect(!reader.isComplete)
    }

    @Test func kernelErrorsAreNamed() throws {
        #expect(throws: NeighbourError.kernel(errno: EBUSY)) { try read(NL.error(-EBUSY)) }
        #expect(throws: NeighbourError.kernel(errno: ENOBUFS)) { try read(NL.done(code: -ENOBUFS)) }
        // The most negative number must not trap when negated.
        #expect(throws: NeighbourError.kernel(errno: Int32.min)) { try read(NL.error(Int32.min)) }
        #expect(throws: NeighbourError.overrun) { try read(NL.message(type: NL.nlmsgOverrun, payload: [])) }
        #expect(throws: NeighbourError.truncatedError(offset: 0)) {
            try read(NL.message(type: NL.nlmsgError, payload: [0xFF, 0xFF]))
        }
        // An acknowledgement ends the request: complete, nothing in it.
        let acknowledged = try read(NL.error(0))
        #expect(acknowledged.isComplete)
        #expect(acknowledged.neighbours.isEmpty)
    }

    @Test func hostileLengthsAreNamed() throws {
        let good = NL.neighbour(family: NL.afInet, address: v4, mac: phone)
        #expect(throws: NeighbourError.truncatedHeader(offset: good.count)) { try read(good + [1, 2, 3]) }
        #expect(throws: NeighbourError.badMessageLength(offset: 0, length: 15)) {
            try read(NL.message(type: NL.rtmNewNeigh, payload: [], length: 15))
        }
        #expect(throws: NeighbourError.badMessageLength(offset: 0, length: 0)) {
            try read(NL.message(type: NL.rtmNewNeigh, payload: [], length: 0))
        }
        #expect(throws: NeighbourError.truncatedMessage(offset: 0, length: Int(UInt32.max), available: 16)) {
            try read(NL.message(type: NL.rtmNewNeigh, payload: [], length: UInt32.max))
        }
        #expect(throws: NeighbourError.truncatedNeighbour(offset: 0)) {
            try read(NL.message(type: NL.rtmNewNeigh, payload: [UInt8](repeating: 0, count: 11)))
        }
        let ndmsg = NL.ndmsg(family: NL.afInet, state: NL.nudReachable, attributes: [])
        #expect(throws: NeighbourError.badAttributeLength(offset: 28, length: 3)) {
            try read(NL.message(type: NL.rtmNewNeigh, payload: ndmsg + NL.attribute(NL.ndaDst, v4, length: 3)))
        }
        #expect(throws: NeighbourError.badAttributeLength(offset: 28, length: 9)) {
            try read(NL.message(type: NL.rtmNewNeigh, payload: ndmsg + NL.attribute(NL.ndaDst, v4, length: 9)))
        }
        #expect(throws: NeighbourError.truncatedAttribute(offset: 28)) {
            try read(NL.message(type: NL.rtmNewNeigh, payload: ndmsg + [8, 0], pad: false))
        }
        #expect(throws: NeighbourError.badAddressLength(offset: 32, family: NL.afInet, length: 16)) {
            try read(NL.neighbour(family: NL.afInet, address: v6, mac: phone))
        }
        #expect(throws: NeighbourError.badAddressLength(offset: 32, family: NL.afInet6, length: 4)) {
            try read(NL.neighbour(family: NL.afInet6, address: v4, mac: phone))
        }
    }

    /// Every cut of a good dump either reads whole messages or names what is wrong.
    @Test func everyCutIsReadOrNamed() throws {
        let first = NL.neighbour(family: NL.afInet, address: v4, mac: phone)
        let second = NL.neighbour(family: NL.afInet6, address: v6, mac: laptop)
        let dump = first + second + NL.done()
        let boundaries = [first.count, first.count + second.count]
        #expect(try read(first).neighbours.count == 1)
        for cut in 1..<dump.count {
            let prefix = Array(dump.prefix(cut))
            if boundaries.contains(cut) {
                #expect(throws: Never.self) { try read(prefix) }
            } else {
                #expect(throws: NeighbourError.self, "cut at \(cut)") { try read(prefix) }
            }
        }
    }

    /// Random damage never traps; whatever is kept has a 6-byte address by construction.
    @Test func damagedBytesNeverTrap() {
        let dump =
            NL.neighbour(family: NL.afInet, address: v4, mac: phone)
            + NL.neighbour(family: NL.afInet6, address: v6, mac: laptop)
            + NL.error(-EINVAL)
            + NL.done()
        var generator = SeededGenerator(seed: 0x6E65_6967)
        var errors = 0
        for _ in 0..<20_000 {
            var bytes = dump
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            if (try? read(bytes)) == nil { errors += 1 }
        }
        #expect(errors > 0)
    }
}
