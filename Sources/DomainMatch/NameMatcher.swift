/// For each list a matcher holds, the label count of the most specific entry covering a
/// name (0 = no entry covers it). The rule itself is the name's suffix of that many
/// labels, so a match needs no stored string (docs/decisions.md#matching).
///
/// One byte per list in two words, so clearing and comparing (is anything matched?) are
/// two operations each, not sixteen: they run once per query.
public struct MatchDepths: Sendable, Equatable {
    public static let capacity = 16
    private var low: UInt64 = 0
    private var high: UInt64 = 0

    public init() {}

    @inline(__always)
    public subscript(list: Int) -> Int {
        get {
            let shift = UInt64(truncatingIfNeeded: list & 7) &* 8
            return Int(truncatingIfNeeded: ((list < 8 ? low : high) &>> shift) & 0xFF)
        }
        set {
            let shift = UInt64(truncatingIfNeeded: list & 7) &* 8
            let byte = UInt64(UInt8(truncatingIfNeeded: newValue)) &<< shift
            let keep = ~(UInt64(0xFF) &<< shift)
            if list < 8 { low = low & keep | byte } else { high = high & keep | byte }
        }
    }

    /// Whether no list covers the name.
    @inline(__always)
    public var isEmpty: Bool { low | high == 0 }
}

/// A set of suffix lists answered in one pass over a name's labels.
///
/// Implementations: `SetMatcher` (simple, for small lists and as the reference) and the
/// label trie. Both are immutable once built and safe to share across threads.
public protocol NameMatcher: Sendable {
    /// Lists held, numbered `0..<listCount` (at most `MatchDepths.capacity`).
    var listCount: Int { get }
    /// Fills `depths[list]` for every list; must not allocate.
    func match(_ name: DomainName, into depths: inout MatchDepths)
    /// The same lookup for a name given as bytes in place: what a `DomainName` of
    /// `labelCount` labels holds (lowercase, labels joined by dots, no trailing dot), which
    /// the caller vouches for. A lookup of names kept in one buffer then copies and
    /// retains nothing (`bench matcher` reads its queries so).
    func match(bytes: UnsafeRawBufferPointer, labelCount: Int, into depths: inout MatchDepths)
}

extension NameMatcher {
    /// For a matcher whose lookup needs a `DomainName`: makes one (and allocates).
    public func match(bytes: UnsafeRawBufferPointer, labelCount: Int, into depths: inout MatchDepths) {
        match(DomainName(validatedBytes: Array(bytes)), into: &depths)
    }

    public func match(_ name: DomainName) -> MatchDepths {
        var depths = MatchDepths()
        match(name, into: &depths)
        return depths
    }

    /// The most specific entry of `list` covering `name`, as a name.
    public func entry(in list: Int, covering name: DomainName) -> DomainName? {
        let depth = match(name)[list]
        return depth == 0 ? nil : name.suffix(labels: depth)
    }
}
