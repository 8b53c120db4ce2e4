import DomainMatch

/// The named, seeded query mixes of `bench matcher` (docs/benchmarks.md#bench-matcher).
public enum QueryMix: String, CaseIterable, Sendable {
    /// 90 % popular names the list does not cover, 10 % listed names and their subdomains.
    case popular
    /// Listed names and subdomains of them only.
    case hits
    /// Names of 6 to 10 labels: half under listed names, half under popular ones.
    case deep
    /// The longest names DNS allows (127 labels, 253 octets), labels of 63 octets,
    /// punycode, trailing dots and upper case, under listed and popular names.
    case hostile

    /// Queries per mix: `popular` keeps the 500,000 of the earlier bench, the others
    /// 200,000 (a hostile name costs a suffix walk of up to 127 labels in some strategies).
    public var defaultCount: Int { self == .popular ? 500_000 : 200_000 }

    /// `count` queries for this mix from the listed names and the popular (uncovered)
    /// names, the same for every strategy and every run with the same seed.
    public func queries(
        listed: [DomainName], popular: [DomainName], count: Int? = nil, seed: UInt64 = 20_261_130
    ) -> [DomainName] {
        let count = count ?? defaultCount
        var random = SplitMix(state: seed ^ UInt64(rawValue.utf8.count) &* 0x9E37_79B9)
        func pick(_ names: [DomainName]) -> DomainName { names[Int(random.next() % UInt64(names.count))] }
        func label(_ length: Int) -> String {
            let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)
            return String(decoding: (0..<length).map { _ in letters[Int(random.next() % 36)] }, as: UTF8.self)
        }
        /// `name` with labels added in front until it has `labels` labels (or 253 octets).
        func deepen(_ name: DomainName, to labels: Int, length: () -> Int) -> String {
            var text = name.description
            var count = name.labelCount
            while count < labels {
                let next = label(length())
                guard text.utf8.count + 1 + next.utf8.count <= QueryName.maxOctets else { break }
                text = next + "." + text
                count += 1
            }
            return text
        }
        let base = popular.isEmpty ? listed : popular
        var out: [DomainName] = []
        out.reserveCapacity(count)
        var index = 0
        while out.count < count {
            index += 1
            let roll = random.next() % 100
            let text: String
            switch self {
            case .popular:
                if roll < 90 {
                    out.append(base[index % base.count])
                    continue
                }
                let name = pick(listed)
                text = roll < 95 ? name.description : "s\(random.next() % 10_000)." + name.description
            case .hits:
                let name = pick(listed)
                text =
                    roll < 50
                    ? name.description
                    : deepen(name, to: name.labelCount + 1 + Int(roll % 3)) { 1 + Int(random.next() % 12) }
            case .deep:
                let under = roll < 50 ? pick(listed) : pick(base)
                text = deepen(under, to: 6 + Int(random.next() % 5)) { 1 + Int(random.next() % 10) }
            case .hostile:
                let under = roll < 50 ? pick(listed) : pick(base)
                switch roll % 5 {
                case 0: text = deepen(under, to: 127) { 1 }  // 127 labels or 253 octets
                case 1: text = deepen(under, to: 127) { 63 }  // labels of 63 octets to 253
                case 2: text = "xn--" + label(20) + ".xn--" + label(8) + "." + under.description
                case 3: text = deepen(under, to: under.labelCount + 2) { 8 } + "."  // a trailing dot
                default: text = deepen(under, to: under.labelCount + 3) { 10 }.uppercased()
                }
            }
            if let name = try? QueryName.parse(text) { out.append(name) }
        }
        return out
    }
}

/// SplitMix64: small, fast, and the same sequence on every machine.
public struct SplitMix: Sendable {
    public var state: UInt64

    public init(state: UInt64) { self.state = state }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
