/// scrypt's cost parameters (RFC 7914 §2): N = 2^logN, block size r, parallelism p.
public struct ScryptParameters: Sendable, Equatable {
    public let logN: Int
    public let r: Int
    public let p: Int

    /// What `phosra-gate passwd` uses: N = 2^14, r = 8, p = 1, the parameters RFC 7914 and
    /// scrypt's paper give for interactive logins. They take 16 MiB and roughly 50–150 ms
    /// on a Raspberry Pi 3 or 4: expensive for someone guessing offline from a copied
    /// configuration file, affordable for a gateway that verifies once per new browser
    /// connection (and caches the result, see `PasswordVerifier`). Larger N would make
    /// each new proxy connection wait visibly on a Pi and cost memory on every loop thread
    /// verifying at once; p > 1 buys nothing on one verification at a time.
    public static let standard = try! ScryptParameters(logN: 14, r: 8, p: 1)

    /// The most memory one verification may take. A stored hash asking for more is refused
    /// when the configuration is read, rather than failing (or swapping) on a Pi later.
    public static let maxMemoryBytes = 64 << 20

    /// - Throws: `.unsupportedParameters` outside logN 10...20, r 1...32, p 1...16, when
    ///   the memory scrypt needs exceeds `maxMemoryBytes`, or when N ≥ 2^(16·r), which
    ///   scrypt forbids (RFC 7914 §2). Below 2^10 scrypt is no longer memory-hard in any
    ///   useful sense.
    public init(logN: Int, r: Int, p: Int) throws(PasswordError) {
        guard (10...20).contains(logN), (1...32).contains(r), (1...16).contains(p), logN < 16 * r,
            Self.memoryBytes(logN: logN, r: r, p: p) <= Self.maxMemoryBytes
        else { throw .unsupportedParameters(logN: logN, r: r, p: p) }
        self.logN = logN
        self.r = r
        self.p = p
    }

    /// OpenSSL's own reckoning, which it checks against `maxmem`: 128·r·p for B, 128·r·(N + 2) for V.
    var memoryBytes: Int { Self.memoryBytes(logN: logN, r: r, p: p) }

    private static func memoryBytes(logN: Int, r: Int, p: Int) -> Int { 128 * r * p + 128 * r * ((1 << logN) + 2) }

    /// The PHC-style parameter field: `ln=14,r=8,p=1`.
    var field: String { "ln=\(logN),r=\(r),p=\(p)" }

    /// Reads `ln=N,r=N,p=N`: those names in that order, plain decimal (no sign, no leading
    /// zero), so there is one spelling of each set of parameters.
    static func parse(_ field: Substring) throws(PasswordError) -> ScryptParameters {
        let parts = field.split(separator: ",", omittingEmptySubsequences: false)
        var values: [Int] = []
        for (part, name) in zip(parts, ["ln=", "r=", "p="]) {
            let digits = part.dropFirst(name.count)
            guard parts.count == 3, part.hasPrefix(name), (1...3).contains(digits.count),
                digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits.first != "0" || digits.count == 1,
                let value = Int(digits)
            else { throw .badParameters(String(field.prefix(40))) }
            values.append(value)
        }
        guard values.count == 3 else { throw .badParameters(String(field.prefix(40))) }
        return try ScryptParameters(logN: values[0], r: values[1], p: values[2])
    }
}
