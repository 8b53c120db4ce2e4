import Testing

@testable import DomainMatch

@Suite struct PunycodeTests {
    // Vectors from RFC 3492 §7.1 and the IANA IDN test TLDs.
    @Test(arguments: [
        ("bücher", "bcher-kva"),
        ("münchen", "mnchen-3ya"),
        ("例え", "r8jz45g"),
        ("テスト", "zckzah"),
        ("рф", "p1ai"),
        ("испытание", "80akhbyknj4f"),
        ("中国", "fiqs8s"),
        ("faß", "fa-hia"),
        ("3年B組金八先生", "3B-ww4c5e180e575a65lsy2b"),
        ("安室奈美恵-with-SUPER-MONKEYS", "-with-SUPER-MONKEYS-pc58ag80a8qai00g7n9n"),
        ("ليهمابتكلموشعربي؟", "egbpdaj6bu4bxfgehfvwxn"),
        ("ab-ü", "ab--joa"),
    ])
    func encodes(input: String, expected: String) {
        let encoded = Punycode.encode(input.unicodeScalars.map(\.value))
        #expect(encoded.map { String(decoding: $0, as: UTF8.self) } == expected)
    }

    @Test func longLabelStillEncodes() {
        let encoded = Punycode.encode(Array(repeating: 0xFC, count: 60))
        #expect(encoded.map { String(decoding: $0, as: UTF8.self) } == "tda" + String(repeating: "a", count: 59))
    }
}
