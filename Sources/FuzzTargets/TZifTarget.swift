import Zoneinfo

/// A zone file (`ZoneRules(tzif:)`, RFC 8536, its footer a POSIX TZ rule) or, for input that
/// is not one, a POSIX TZ string alone (`ZoneRules(posixTZ:)`, the TZ variable).
enum TZifTarget {
    static let target = FuzzTarget(
        "tzif",
        "a parsed zone gives a valid wall clock for every instant tried, and that wall clock resolves back "
            + "to instants that include the one it came from; the next offset change lies ahead"
    ) { input throws(PropertyViolation) in
        let zone: ZoneRules
        do throws(ZoneError) {
            if input.starts(with: Array("TZif".utf8)) {
                zone = try ZoneRules(tzif: input, name: "fuzz")
            } else {
                zone = try ZoneRules(posixTZ: String(decoding: input.prefix(256), as: UTF8.self))
            }
        } catch {
            try check(!error.description.isEmpty, "a zone refused without a reason")
            return
        }
        for instant in instants(input) { try roundTrips(zone, instant) }
    }

    /// Fixed instants (the epoch, today, the ends of the 32-bit range and of Int64), and
    /// instants read from the input, which for a TZif file are often its own transitions.
    static func instants(_ input: [UInt8]) -> [Int64] {
        var instants: [Int64] = [
            0, 1_767_225_600, 1_774_746_000, 1_792_890_000, -2_147_483_648, 2_147_483_647, .min, .max,
            .min + 86_400, .max - 86_400,
        ]
        var index = 44
        while index + 8 <= input.count, instants.count < 24 {
            let value = input[index..<(index + 8)].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            instants += [value, value &- 1]
            index += 37
        }
        return instants
    }

    static func roundTrips(_ zone: ZoneRules, _ instant: Int64) throws(PropertyViolation) {
        let local = zone.localDateTime(at: instant)
        try check(local.isValid, "\(instant) shows the invalid wall clock \(local)")
        _ = zone.abbreviation(at: instant)
        _ = zone.isDaylightSavingTime(at: instant)
        if let next = zone.nextTransition(after: instant) {
            try check(next > instant, "next transition \(next) is not after \(instant)")
            try check(zone.offset(at: next) != zone.offset(at: instant), "no offset change at \(next)")
        }
        // A wall clock a billion years out is outside what resolve computes (`.skipped`).
        guard abs(local.year) < 1_000_000_000 else { return }
        switch zone.resolve(local) {
        case .unique(let found):
            try check(found == instant, "\(local) resolves to \(found), not \(instant)")
        case .ambiguous(let earlier, let later):
            try check(
                earlier < later && (earlier...later).contains(instant), "\(local) resolves to \(earlier)…\(later)")
            try check(
                zone.localDateTime(at: earlier) == local && zone.localDateTime(at: later) == local,
                "\(local) resolves to instants that show other times")
        case .skipped:
            throw PropertyViolation(problem: "\(local), shown at \(instant), resolves to no instant")
        }
    }
}
