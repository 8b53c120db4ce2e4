import DomainMatch
import Testing

/// The two readings of a wire name agree: the one into reused storage and the one into a
/// fresh array, for valid names, odd bytes and malformed forms alike.
@Suite struct DomainNameWireTests {
    @Test func theReadingIntoStorageIsTheFreshReading() {
        let forms: [[UInt8]] = [
            [7] + Array("Example".utf8) + [3] + Array("ORG".utf8) + [0],
            [1, 0x2E, 3, 0x00, 0xFF, 0x41, 0],
            Array(repeating: [63] + [UInt8](repeating: 0x61, count: 63), count: 3).flatMap { $0 } + [0],
            [0],  // the root: no name
            [],
            [3, 0x61, 0x62, 0],  // a label running past the end
            [64] + [UInt8](repeating: 0x61, count: 64) + [0],  // a label over 63 bytes
            [0xC0, 12],  // a pointer
            [1, 0x61, 0, 1, 0x62, 0],  // the root before the end
            [1, 0x61],  // no root label
        ]
        var storage: [UInt8] = []
        for form in forms {
            let reused = DomainName(wire: form, storage: &storage)
            #expect(reused == DomainName(wire: form), "\(form)")
            #expect(reused?.labelCount == DomainName(wire: form)?.labelCount, "\(form)")
        }
    }

    @Test func aNameKeptStillHoldsItsBytesWhenTheStorageIsReused() throws {
        var storage: [UInt8] = []
        let first = try #require(DomainName(wire: [1, 0x61, 3] + Array("com".utf8) + [0], storage: &storage))
        _ = DomainName(wire: [1, 0x62, 3] + Array("net".utf8) + [0], storage: &storage)
        #expect(first.description == "a.com")
    }
}

/// A name as text (RFC 1035 §5.1): bytes a terminal or a report reader would act on are
/// written `\DDD`, the master file's special characters behind a backslash.
@Suite struct DomainNamePresentationTests {
    @Test func controlAndNonASCIIBytesAreDecimalEscapes() throws {
        let labels: [[UInt8]] = [
            [0x61, 0x1B, 0x5B, 0x38, 0x6D, 0x07, 0x0D, 0x0A, 0xE2, 0x80, 0xAE, 0x20], Array("example".utf8),
        ]
        let name = try #require(DomainName(wireLabels: labels))
        #expect(name.description == #"a\027[8m\007\013\010\226\128\174\032.example"#)
    }

    @Test func specialCharactersAreQuoted() throws {
        let name = try #require(DomainName(wireLabels: [Array(#"a"b(c)d;e@f$g\h"#.utf8), Array("test".utf8)]))
        #expect(name.description == #"a\"b\(c\)d\;e\@f\$g\\h.test"#)
    }

    @Test func anOrdinaryNameIsItself() throws {
        #expect(try QueryName.parse("www.Example.com").description == "www.example.com")
        #expect(try QueryName.parse("_dmarc.x-y.example").description == "_dmarc.x-y.example")
    }
}
