/// Walking from an instant to the next offset change, and from wall time to instants.
extension ZoneRules {
    /// The first instant after `unixSeconds` at which the UTC offset changes, or nil if
    /// it does not change within the next 50 years. Changes of abbreviation or DST flag
    /// alone do not count. Use it to cap caches of anything derived from the wall clock.
    public func nextTransition(after unixSeconds: Int64) -> Int64? {
        let fiftyYears: Int64 = 50 * 366 * 86_400
        let (limit, overflow) = unixSeconds.addingReportingOverflow(fiftyYears)
        return nextTransition(after: unixSeconds, notAfter: overflow ? Int64.max : limit)
    }

    /// The first instant in `(instant, limit]` at which the offset changes, if any.
    func nextTransition(after instant: Int64, notAfter limit: Int64) -> Int64? {
        let current = offset(at: instant)
        var index = firstTransition(after: instant)
        while index < transitions.count {
            let time = transitions[index]
            if time > limit { return nil }
            // From the last transition on the footer rules, and it may disagree.
            let next =
                index == transitions.count - 1 && footer != nil
                ? footer!.zone(at: time).offset
                : types[Int(transitionTypes[index])].offset
            if next != current { return time }
            index += 1
        }
        guard let footer else { return nil }
        return footer.nextChange(after: max(instant, transitions.last ?? instant), notAfter: limit)
    }

    /// The index of the first transition > `instant` (`transitions.count` if none).
    private func firstTransition(after instant: Int64) -> Int {
        var low = 0
        var high = transitions.count
        while low < high {
            let middle = low + (high - low) / 2
            if transitions[middle] <= instant { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The instants whose wall clock in this zone reads `local`.
    ///
    /// Exact for any rules: an instant t shows `local` iff t = local − offset(t), and
    /// |offset| ≤ `maxOffsetMagnitude`, so only offsets in force within that distance of
    /// `local` can qualify; each is tried. An invalid reading (see
    /// `LocalDateTime.isValid`) or a year beyond ±10^9 resolves to `.skipped`.
    public func resolve(_ local: LocalDateTime) -> LocalResolution {
        guard let wall = local.secondsSince1970 else { return .skipped }
        let reach = maxOffsetMagnitude + 1
        var cursor = wall - reach
        var offsets = [offset(at: cursor)]
        while let change = nextTransition(after: cursor, notAfter: wall + reach) {
            offsets.append(offset(at: change))
            cursor = change
        }
        var instants: [Int64] = []
        for candidate in offsets {
            let instant = wall - Int64(candidate)
            if offset(at: instant) == candidate && !instants.contains(instant) { instants.append(instant) }
        }
        instants.sort()
        switch instants.count {
        case 0: return .skipped
        case 1: return .unique(instants[0])
        default: return .ambiguous(earlier: instants[0], later: instants[instants.count - 1])
        }
    }
}
