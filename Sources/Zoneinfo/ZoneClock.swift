/// A zone's wall clock for a thread that asks it again and again (a loop, for every
/// query): the offset found for one instant holds until the zone's next offset change, so
/// the wall time of a later instant before that change is arithmetic alone.
///
/// Why: reading the zone walks its table and, for the instants its POSIX rule governs
/// (every instant since the table's end, for most zones in the system's files), works out
/// the dates of four years of the rule. Done for every query, that was about 2 % of a DNS
/// loop's time even in UTC (docs/performance.md#where-the-slow-answers-are).
///
/// A value each thread keeps for itself, never shared. It knows a zone by the identity of
/// the `ZoneRules` value it was given (copies share it), so a new configuration's zone
/// is read afresh even under the same name.
public struct ZoneClock {
    /// How many times the zone itself was read: once per offset change, per zone given, and
    /// per step back of the clock. Tests hold the clock to it.
    public private(set) var zoneReads = 0
    /// The remembered zone's identity; 0 (no zone has it) until the first reading.
    @usableFromInline var identity: UInt64 = 0
    /// The instants `[from, until)` in which `offset` holds.
    @usableFromInline var from: Int64 = 0
    @usableFromInline var until: Int64 = 0
    @usableFromInline var offset: Int32 = 0

    public init() {}

    /// The wall clock of `zone` at `unixSeconds`: what `zone.localDateTime(at:)` gives.
    /// Inlined, so that the common case reads the zone's identity in place instead of
    /// copying the zone (its name and tables, a retain each) into a call.
    @inlinable
    public mutating func localDateTime(at unixSeconds: Int64, in zone: ZoneRules) -> LocalDateTime {
        if zone.identity != identity || unixSeconds < from || unixSeconds >= until { read(zone, at: unixSeconds) }
        return LocalDateTime(secondsSince1970: unixSeconds, plus: offset)
    }

    /// Reads the zone's offset at `unixSeconds` and how long it holds.
    @usableFromInline
    mutating func read(_ zone: ZoneRules, at unixSeconds: Int64) {
        zoneReads += 1
        identity = zone.identity
        offset = zone.offset(at: unixSeconds)
        from = unixSeconds
        // nil: no change within the next fifty years (of 366 days), so none within
        // fifty of 365 either.
        let (horizon, overflow) = unixSeconds.addingReportingOverflow(50 * 365 * 86_400)
        until = zone.nextTransition(after: unixSeconds) ?? (overflow ? Int64.max : horizon)
    }
}
