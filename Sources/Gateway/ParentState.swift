import DomainMatch
import Policy
import Store

/// What a parent decided on the gateway's page, as snapshots are made with it: each
/// profile's live overrides and the devices assigned to profiles (docs/parent-page.md).
/// Read from the store at start and after every change the page makes.
package struct ParentState: Sendable, Equatable {
    package var overrides: [String: Overrides]
    package var assignments: [MACAddress: String]

    package static let empty = ParentState(overrides: [:], assignments: [:])

    package init(overrides: [String: Overrides], assignments: [MACAddress: String]) {
        self.overrides = overrides
        self.assignments = assignments
    }

    /// The live overrides and the assignments stored in `store` at `now`.
    package static func load(from store: Store, now: Int64) throws(StoreError) -> ParentState {
        var overrides: [String: [Override]] = [:]
        for row in try store.liveOverrides(now: now) {
            guard let override = Override(row) else { continue }
            overrides[row.profile, default: []].append(override)
        }
        var assignments: [MACAddress: String] = [:]
        for device in try store.devices() {
            guard let profile = device.profile, let mac = MACAddress(device.mac) else { continue }
            assignments[mac] = profile
        }
        return ParentState(overrides: overrides.mapValues(Overrides.init), assignments: assignments)
    }

    /// `profile` with the overrides the parent set for it.
    package func applied(to profile: Profile) -> Profile {
        guard let set = overrides[profile.name], !set.isEmpty else { return profile }
        return profile.with(set)
    }
}

extension Override {
    /// From its stored row; nil for a row this build cannot read (an unknown kind, a name
    /// that no longer parses), which then decides nothing.
    package init?(_ row: OverrideRow) {
        let kind: Kind
        switch row.kind {
        case "pause": kind = .pause
        case "extension": kind = .extension
        case "app_bonus":
            guard let service = row.target, let minutes = row.minutes, let day = row.day else { return nil }
            kind = .appBonus(service: service, minutes: minutes, day: day)
        case "exception":
            guard let text = row.target, let name = try? QueryName.parse(text) else { return nil }
            kind = .exception(name)
        default: return nil
        }
        self.init(id: row.id, profile: row.profile, kind: kind, start: row.startsAt, end: row.endsAt, setBy: row.setBy)
    }

    /// Its row for the store (id 0: the store gives one).
    package var row: OverrideRow {
        var row = OverrideRow(profile: profile, kind: kindName, startsAt: start, endsAt: end, setBy: setBy)
        switch kind {
        case .pause, .extension: break
        case .appBonus(let service, let minutes, let day):
            row.target = service
            row.minutes = minutes
            row.day = day
        case .exception(let name): row.target = name.description
        }
        return row
    }
}
