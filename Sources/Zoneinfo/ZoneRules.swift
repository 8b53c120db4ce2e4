import Synchronization

/// How a wall-clock reading maps to instants in a zone.
public enum LocalResolution: Equatable, Sendable {
    /// Exactly one instant (unix seconds) shows this wall time.
    case unique(Int64)
    /// The wall time occurs twice (the clock was set back); `earlier` is the instant
    /// under the offset in force before the change, `later` the one after it. (Were a
    /// wall time ever to occur three times, these are the first and the last.)
    case ambiguous(earlier: Int64, later: Int64)
    /// The wall time does not exist (the clock jumped over it), or the reading is not
    /// a valid date and time.
    case skipped
}

/// The local-time rules of one zone: a table of transitions (from a TZif file) followed
/// by a POSIX TZ rule (the file's footer) for instants from the last transition on.
///
/// Immutable and `Sendable`; `offset(at:)` is a binary search with no allocation.
public struct ZoneRules: Sendable, Equatable {
    /// The zone's name: the IANA name it was loaded by, "localtime", or the TZ string.
    public let name: String
    /// This value's own number, never given to another (copies share it): what a
    /// `ZoneClock` knows the zone it remembers by. Not part of equality.
    @usableFromInline let identity: UInt64
    /// Strictly ascending instants at which `transitionTypes` change.
    let transitions: [Int64]
    let transitionTypes: [UInt8]
    let types: [LocalTimeType]
    /// The type in force before the first transition.
    let initialType: Int
    /// Governs instants at or after the last transition (or all, with no transitions).
    let footer: PosixTZ?
    /// The largest |offset| any rule yields; bounds the search in `resolve`.
    let maxOffsetMagnitude: Int64

    /// Coordinated Universal Time: offset 0 forever.
    public static let utc = ZoneRules(
        name: "UTC", transitions: [], transitionTypes: [],
        types: [LocalTimeType(offset: 0, isDaylight: false, abbreviation: "UTC")], footer: nil)

    /// Parses a TZif file (RFC 8536, v1 to v4). Leap-second records are ignored.
    /// - Throws: `.malformed` for any structural error, including a bad footer TZ string.
    public init(tzif bytes: [UInt8], name: String) throws(ZoneError) {
        let data = try TZif.parse(bytes, name: name)
        var footer: PosixTZ?
        if let text = data.footer, !text.isEmpty {
            do {
                footer = try PosixTZ(text)
            } catch {
                throw .malformed(name: name, reason: "footer: \(error)")
            }
        }
        self.init(
            name: name, transitions: data.transitions, transitionTypes: data.transitionTypes,
            types: data.types, footer: footer)
    }

    /// Rules given by a POSIX TZ string alone, e.g. `EST5EDT,M3.2.0,M11.1.0`; the name
    /// is the string itself.
    public init(posixTZ: String) throws(ZoneError) {
        let rule = try PosixTZ(posixTZ)
        let standard = LocalTimeType(
            offset: rule.standard.offset, isDaylight: false, abbreviation: rule.standard.abbreviation)
        self.init(name: posixTZ, transitions: [], transitionTypes: [], types: [standard], footer: rule)
    }

    init(name: String, transitions: [Int64], transitionTypes: [UInt8], types: [LocalTimeType], footer: PosixTZ?) {
        self.name = name
        identity = Self.identities.add(1, ordering: .relaxed).newValue
        self.transitions = transitions
        self.transitionTypes = transitionTypes
        self.types = types
        self.footer = footer
        // As glibc does, and as RFC 8536's "type 0" amounts to for files zic writes:
        // the first standard-time type, or type 0 if every type is daylight time.
        initialType = types.firstIndex { !$0.isDaylight } ?? 0
        var magnitude = types.map { Int64($0.offset).magnitude }.max() ?? 0
        if let footer {
            magnitude = max(
                magnitude, Int64(footer.standard.offset).magnitude,
                Int64(footer.daylight?.zone.offset ?? 0).magnitude)
        }
        maxOffsetMagnitude = Int64(magnitude)
    }

    private static let identities = Atomic<UInt64>(0)

    /// The same rules, whatever their identity.
    public static func == (a: ZoneRules, b: ZoneRules) -> Bool {
        a.name == b.name && a.transitions == b.transitions && a.transitionTypes == b.transitionTypes
            && a.types == b.types && a.initialType == b.initialType && a.footer == b.footer
            && a.maxOffsetMagnitude == b.maxOffsetMagnitude
    }

    /// Seconds east of UTC in force at `unixSeconds`.
    public func offset(at unixSeconds: Int64) -> Int32 {
        guard let index = typeIndex(at: unixSeconds) else { return footer!.zone(at: unixSeconds).offset }
        return types[index].offset
    }

    /// The abbreviation in force at `unixSeconds`, e.g. "CEST" or "+0530".
    public func abbreviation(at unixSeconds: Int64) -> String {
        guard let index = typeIndex(at: unixSeconds) else { return footer!.zone(at: unixSeconds).abbreviation }
        return types[index].abbreviation
    }

    /// Whether daylight-saving time is in force at `unixSeconds` (by the zone's own
    /// flag: Europe/Dublin's winter time is its daylight time, with a negative save).
    public func isDaylightSavingTime(at unixSeconds: Int64) -> Bool {
        guard let index = typeIndex(at: unixSeconds) else { return footer!.isDaylight(at: unixSeconds) }
        return types[index].isDaylight
    }

    /// The wall clock in this zone at `unixSeconds`. Total over all of Int64.
    public func localDateTime(at unixSeconds: Int64) -> LocalDateTime {
        LocalDateTime(secondsSince1970: unixSeconds, plus: offset(at: unixSeconds))
    }

    /// The index into `types` governing `instant`, or nil when the footer does.
    private func typeIndex(at instant: Int64) -> Int? {
        guard let last = transitions.last else { return footer == nil ? initialType : nil }
        if instant >= last && footer != nil { return nil }
        if instant < transitions[0] { return initialType }
        return Int(transitionTypes[lastTransition(atOrBefore: instant)])
    }

    /// The index of the last transition ≤ `instant`; requires transitions[0] ≤ instant.
    private func lastTransition(atOrBefore instant: Int64) -> Int {
        var low = 0
        var high = transitions.count - 1  // transitions[low] ≤ instant
        while low < high {
            let middle = low + (high - low + 1) / 2
            if transitions[middle] <= instant { low = middle } else { high = middle - 1 }
        }
        return low
    }
}
