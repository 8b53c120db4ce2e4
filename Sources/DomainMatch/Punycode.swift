/// RFC 3492 punycode encoder: the `xn--` form of a non-ASCII label (docs/decisions.md#names).
///
/// Only encoding is needed: names are compared in their ASCII form, and no further
/// Unicode mapping (no IDNA2008 tables, no NFC) is applied on purpose.
enum Punycode {
    private static let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700
    private static let initialBias = 72, initialN: UInt32 = 128

    /// Encodes `scalars` (one label) without the `xn--` prefix; nil on overflow.
    static func encode(_ scalars: [UInt32]) -> [UInt8]? {
        var output: [UInt8] = scalars.filter { $0 < 0x80 }.map { UInt8($0) }
        let basicCount = output.count
        var handled = basicCount
        if basicCount > 0 { output.append(UInt8(ascii: "-")) }

        var n = initialN
        var delta = 0
        var bias = initialBias
        while handled < scalars.count {
            // The smallest code point not yet handled.
            guard let m = scalars.filter({ $0 >= n }).min() else { return nil }
            let (step, overflow) = Int(m - n).multipliedReportingOverflow(by: handled + 1)
            guard !overflow, delta <= Int(Int32.max) - step else { return nil }
            delta += step
            n = m
            for scalar in scalars {
                if scalar < n {
                    delta += 1
                    guard delta <= Int(Int32.max) else { return nil }
                }
                if scalar == n {
                    var q = delta
                    var k = base
                    while true {
                        let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                        if q < t { break }
                        output.append(digit(t + (q - t) % (base - t)))
                        q = (q - t) / (base - t)
                        k += base
                    }
                    output.append(digit(q))
                    bias = adapt(delta: delta, points: handled + 1, first: handled == basicCount)
                    delta = 0
                    handled += 1
                }
            }
            delta += 1
            n += 1
        }
        return output
    }

    private static func digit(_ value: Int) -> UInt8 {
        value < 26 ? UInt8(ascii: "a") + UInt8(value) : UInt8(ascii: "0") + UInt8(value - 26)
    }

    private static func adapt(delta: Int, points: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / points
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }
}
