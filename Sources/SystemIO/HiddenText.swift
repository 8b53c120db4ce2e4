extension Unicode.Scalar {
    /// Characters a reader cannot see or that reorder what follows: C0 and C1 controls,
    /// DEL, and the bidi embedding, override, isolate and mark characters. Text from
    /// outside shows them as `\u{…}` wherever it is written (a page, a terminal).
    public var hidesText: Bool {
        switch value {
        case 0..<0x20, 0x7F..<0xA0, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
