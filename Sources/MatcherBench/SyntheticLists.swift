/// Deterministic synthetic lists for `bench matcher` without files: a million listed
/// names shaped like real block lists (mostly registrable names, some subdomains, a
/// realistic mix of TLDs) and popular-looking names that the list does not cover.
struct SyntheticLists {
    private var random: SplitMix

    init(seed: UInt64) { random = SplitMix(state: seed) }

    private static let tlds = [
        "com", "com", "com", "com", "com", "net", "org", "info", "ru", "de", "xyz", "top", "co.uk",
        "io", "online", "site", "biz", "pl", "com.br", "fr", "nl", "club", "cn", "jp",
    ]
    private static let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)

    private mutating func label(_ lengths: ClosedRange<Int>) -> String {
        let length = lengths.lowerBound + Int(random.next() % UInt64(lengths.count))
        var bytes: [UInt8] = []
        for index in 0..<length {
            let letter = Self.letters[Int(random.next() % UInt64(index == 0 ? 26 : Self.letters.count))]
            bytes.append(letter)
            if index > 0, index < length - 1, random.next() % 23 == 0 { bytes.append(UInt8(ascii: "-")) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// One listed name: 70 % two labels, 25 % three, 5 % four.
    mutating func listedName() -> String {
        let tld = Self.tlds[Int(random.next() % UInt64(Self.tlds.count))]
        let roll = random.next() % 100
        var name = label(4...16) + "." + tld
        if roll >= 70 { name = label(2...8) + "." + name }
        if roll >= 95 { name = label(2...6) + "." + name }
        return name
    }

    /// A popular-looking name: `www.`, `api.`, `cdn.` … under a name of its own.
    mutating func popularName() -> String {
        let prefixes = ["", "", "www.", "m.", "api.", "cdn.", "static.", "img.", "login.", "app."]
        let prefix = prefixes[Int(random.next() % UInt64(prefixes.count))]
        return prefix + label(3...10) + "pop." + Self.tlds[Int(random.next() % 6)]
    }

    mutating func next() -> UInt64 { random.next() }
}
