import Testing

@testable import Base64

@Suite struct Base64Tests {
    /// RFC 4648 §10.
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test func theRFCVectorsBothWays() {
        for (plain, encoded) in Self.vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(Array(encoded.utf8)) == Array(plain.utf8), "\(encoded)")
            let unpadded = String(encoded.filter { $0 != "=" })
            #expect(Base64.encode(Array(plain.utf8), padded: false) == unpadded)
            #expect(Base64.decode(Array(unpadded.utf8), padded: false) == Array(plain.utf8), "\(unpadded)")
        }
    }

    /// Every byte value and every length modulo 3, padded and not.
    @Test func roundTripsEveryByteAndLength() {
        let bytes = (0..<256).map { UInt8(($0 * 167 + 13) % 256) }
        for length in 0...bytes.count {
            let slice = Array(bytes.prefix(length))
            for padded in [true, false] {
                let text = Base64.encode(slice, padded: padded)
                #expect(Base64.decode(Array(text.utf8), padded: padded) == slice, "length \(length)")
            }
        }
    }

    @Test func refusesWhatIsNotTheOneEncoding() {
        let padded = [
            "Zg", "Zg=", "Zm8", "Zg===", "Z===", "Zm9v=", "Zh==", "Zm9=", "Zm 9v", "Zm9v\n", " Zm9v", "Zm-v",
            "Zm_v", "Zm=v", "=Zm9", "Zm9vYg==Zm9v", "é===",
        ]
        for text in padded {
            #expect(Base64.decode(Array(text.utf8)) == nil, "\(text) padded")
        }
        let unpadded = ["Zg==", "Zm8=", "Z", "Zm9vY", "Zh", "Zm9", "Zm9v ", "Zm\u{0}v"]
        for text in unpadded {
            #expect(Base64.decode(Array(text.utf8), padded: false) == nil, "\(text) unpadded")
        }
    }
}
