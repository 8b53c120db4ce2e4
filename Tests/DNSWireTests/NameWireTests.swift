import DNSWire
import Testing

@Suite("Names on the wire: compression pointers (RFC 1035 §4.1.4)")
struct NameWireTests {
    /// The example of RFC 1035 §4.1.4: F.ISI.ARPA at 20, FOO.F.ISI.ARPA at 40 as FOO plus a
    /// pointer to 20, and ARPA as a bare pointer to the ARPA label of the first name.
    static let rfc1035Example: [UInt8] = {
        var bytes = header(qd: 0) + [UInt8](repeating: 0xEE, count: 8)
        bytes += [1, 0x46, 3, 0x49, 0x53, 0x49, 4, 0x41, 0x52, 0x50, 0x41, 0]
        bytes += [UInt8](repeating: 0xEE, count: 40 - bytes.count)
        bytes += [3, 0x46, 0x4F, 0x4F, 0xC0, 20]
        bytes += [0xC0, 26]
        return bytes
    }()

    @Test func followsPointersAsInRFC1035() throws {
        var reader = DNSReader(Self.rfc1035Example, readerIndex: 20)
        #expect(try reader.readName() == name("F.ISI.ARPA"))
        #expect(reader.readerIndex == 32)
        reader = DNSReader(Self.rfc1035Example, readerIndex: 40)
        let foo = try reader.readName()
        #expect(foo.wire == wire("FOO.F.ISI.ARPA"))
        #expect(reader.readerIndex == 46)  // just past the pointer, not where it led
        #expect(try reader.readName().wire == wire("ARPA"))
        #expect(reader.readerIndex == 48)
        reader = DNSReader(Self.rfc1035Example, readerIndex: 40)
        try reader.skipName()
        #expect(reader.readerIndex == 46)
    }

    /// A packet whose question name is `nameBytes` (then type and class), padded so that
    /// pointers into the padding are backward-looking only if the test wants them to be.
    func parseQuestionName(_ nameBytes: [UInt8], padding: Int = 0) -> DNSWireError? {
        let packet = header() + nameBytes + u16(1) + u16(1) + [UInt8](repeating: 0, count: padding)
        return thrown { try DNSMessage.parse(packet) }
    }

    @Test func pointerErrorsAreNamed() throws {
        // A pointer to itself, and a pointer back into its own name: loops.
        #expect(parseQuestionName([0xC0, 12]) == .pointerLoop(offset: 12))
        #expect(parseQuestionName([1, 0x61, 0xC0, 12]) == .pointerLoop(offset: 14))
        // A pointer to a later offset, even a valid one.
        #expect(parseQuestionName([0xC0, 18], padding: 8) == .pointerForward(offset: 12))
        // Past the end, and into the header.
        #expect(parseQuestionName([0xC0, 0xFF]) == .pointerOutOfBounds(offset: 12))
        #expect(parseQuestionName([0xFF, 0xFF]) == .pointerOutOfBounds(offset: 12))
        #expect(parseQuestionName([1, 0x61, 0xC0, 4]) == .pointerOutOfBounds(offset: 14))
        // Found by the dns-answer fuzz target: a pointer back into the question whose labels
        // run on past the pointer (here through its own bytes). Truncating the message after
        // that record then cut the name in half; only a prior name may be pointed at.
        let runsOn =
            header(flags: 0x8180, an: 1) + question([3, 1, 2, 7, 0]) + rr([0xC0, 13], type: 1, rdata: [1, 2, 3, 4])
        #expect(thrown { try DNSMessage.parse(runsOn) } == .pointerForward(offset: 21))
        let walked = thrown {
            var cursor = try DNSRecordCursor(runsOn)
            _ = try cursor.next(in: runsOn)
        }
        #expect(walked == .pointerForward(offset: 21))
        // The same bytes, the pointer ending where a name does: accepted.
        let prior =
            header(flags: 0x8180, an: 1) + question([3, 1, 2, 3, 0]) + rr([0xC0, 13], type: 1, rdata: [1, 2, 3, 4])
        #expect(try DNSMessage.parse(prior).answers[0].name.wire == [1, 2, 3, 0, 0, 1, 0])
        // A pointer cut in half by the end of the packet.
        var reader = DNSReader(header() + [1, 0x61, 0xC0], readerIndex: 12)
        reader.section = .question
        #expect(thrown { try reader.readName() } == .truncated(section: .question, offset: 14))
    }

    @Test func labelAndNameLimits() {
        let label64: [UInt8] = [64] + [UInt8](repeating: 0x61, count: 64) + [0]
        #expect(parseQuestionName(label64) == .labelTooLong(offset: 12))
        #expect(parseQuestionName([0x80, 0]) == .badLabelType(offset: 12))
        #expect(parseQuestionName([0xBF, 0]) == .badLabelType(offset: 12))
        let label63: [UInt8] = [63] + [UInt8](repeating: 0x61, count: 63)
        #expect(parseQuestionName(label63 + label63 + label63 + label63 + [0]) == .nameTooLong(offset: 12))
        let label61: [UInt8] = [61] + [UInt8](repeating: 0x61, count: 61)
        #expect(parseQuestionName(label63 + label63 + label63 + label61 + [0]) == nil)  // exactly 255
        var reader = DNSReader(header() + [5, 0x61, 0x62], readerIndex: 12)
        reader.section = .question
        #expect(thrown { try reader.readName() } == .truncated(section: .question, offset: 12))
    }

    @Test func compressionCannotBuildANameOver255Bytes() {
        // The question holds a 193-byte name; an answer's owner adds 64 bytes and points at it.
        let label63: [UInt8] = [63] + [UInt8](repeating: 0x61, count: 63)
        let long = label63 + label63 + label63 + [0]
        let owner = label63 + [0xC0, 12]
        let packet = header(an: 1) + question(long) + rr(owner, type: 1, rdata: [1, 2, 3, 4])
        let ownerOffset = 12 + long.count + 4
        #expect(thrown { try DNSMessage.parse(packet) } == .nameTooLong(offset: ownerOffset))
        let cursorError = thrown {
            var cursor = try DNSRecordCursor(packet)
            return try cursor.next(in: packet)
        }
        #expect(cursorError == .nameTooLong(offset: ownerOffset))
    }

    @Test func pointerChainsAreBounded() throws {
        // "a." at 12, then 128 pointers each pointing at the one before (the first at 12).
        var bytes = header(qd: 0) + [1, 0x61, 0]
        var previous = 12
        for _ in 0..<128 {
            let here = bytes.count
            bytes += [0xC0 | UInt8(previous >> 8), UInt8(previous & 0xFF)]
            previous = here
        }
        var reader = DNSReader(bytes, readerIndex: previous - 2)  // 127 hops: allowed
        #expect(try reader.readName() == name("a"))
        reader = DNSReader(bytes, readerIndex: previous)  // 128 hops
        #expect(thrown { try reader.readName() } == .tooManyPointers(offset: 15))
    }

    @Test func writingCompressesRepeatedNamesAndSuffixes() throws {
        var writer = DNSWriter()
        writer.writeHeader(DNSHeader())
        writer.writeName(name("www.example.com"))
        #expect(writer.writerIndex == 12 + 17)
        writer.writeName(name("www.example.com"))
        #expect(Array(writer.bytes[29...]) == [0xC0, 12])
        let mailStart = writer.writerIndex
        writer.writeName(name("MAIL.Example.COM"))  // case-insensitive match, first spelling wins
        #expect(Array(writer.bytes[mailStart...]) == [4] + Array("MAIL".utf8) + [0xC0, 16])
        let rootStart = writer.writerIndex
        writer.writeName(.root)
        #expect(Array(writer.bytes[rootStart...]) == [0])
        let plainStart = writer.writerIndex
        writer.writeName(name("example.com"), compress: false)
        #expect(Array(writer.bytes[plainStart...]) == wire("example.com"))

        var reader = DNSReader(writer.bytes, readerIndex: mailStart)
        #expect(try reader.readName().wire == wire("MAIL.example.com"))
    }

    @Test func uncompressedNamesAreNotOfferedAsTargets() {
        var writer = DNSWriter()
        writer.writeHeader(DNSHeader())
        writer.writeName(name("target.example"), compress: false)
        let second = writer.writerIndex
        writer.writeName(name("target.example"))
        #expect(Array(writer.bytes[second...]) == wire("target.example"))
    }

    @Test func namesBeyondTheReachOfPointersAndAFullTableStayCorrect() throws {
        // 200 distinct names overflow the 128-entry table; filler pushes later names past
        // offset 0x3FFF, which a 14-bit pointer cannot reach.
        var message = DNSMessage(header: DNSHeader(id: 7))
        message.questions = [DNSQuestion(name: name("q.example"), type: .txt)]
        for index in 0..<200 {
            message.answers.append(
                ResourceRecord(
                    name: name("n\(index).zone\(index % 7).example"), ttl: 60,
                    rdata: .txt(Array(repeating: 0x41, count: 80))))
        }
        let bytes = message.serialized()
        #expect(bytes.count > 0x4000)
        let parsed = try DNSMessage.parse(bytes)
        #expect(parsed.questions == message.questions)
        #expect(parsed.answers == message.answers)
    }

    @Test func aParsedNameReSerialisesAtAnotherOffset() throws {
        // The CNAME answer from NSD: owner and target are pointers into the question.
        let original = try DNSMessage.parse(Captured.cname.response)
        var moved = original
        moved.questions = [DNSQuestion(name: name("a.much.longer.question.name.invalid"), type: .a)]
        let bytes = moved.serialized()
        let reparsed = try DNSMessage.parse(bytes)
        #expect(reparsed.answers == original.answers)
        #expect(reparsed.answers[0].rdata.cnameTarget?.wire == wire("web.example.test"))
        #expect(reparsed.authorities == original.authorities)
        #expect(reparsed.additionals == original.additionals)
    }
}
