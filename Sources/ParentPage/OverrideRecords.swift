import DomainMatch
import Policy
import Store

/// An override as the store keeps it: its kind as a word and the fields that kind needs.
extension Override {
    /// From its stored row; nil for a row this build cannot read (an unknown kind, a name
    /// that no longer parses), which then decides nothing.
    public init?(_ row: OverrideRow) {
        let kind: Kind
        switch row.kind {
        case "pause": kind = .pause
        case "extension": kind = .extension
        case "app_bonus":
            guard let service = row.target, let minutes = row.minutes, let day = row.day else { return nil }
            kind = .appBonus(service: service, minutes: minutes, day: day)
        case "daily_bonus":
            guard let minutes = row.minutes, let day = row.day else { return nil }
            kind = .dailyBonus(minutes: minutes, day: day)
        case "exception":
            guard let text = row.target, let name = try? QueryName.parse(text) else { return nil }
            kind = .exception(name)
        default: return nil
        }
        self.init(id: row.id, profile: row.profile, kind: kind, start: row.startsAt, end: row.endsAt, setBy: row.setBy)
    }

    /// Its row for the store (id 0: the store gives one).
    public var row: OverrideRow {
        var row = OverrideRow(profile: profile, kind: kindName, startsAt: start, endsAt: end, setBy: setBy)
        switch kind {
        case .pause, .extension: break
        case .appBonus(let service, let minutes, let day):
            row.target = service
            row.minutes = minutes
            row.day = day
        case .dailyBonus(let minutes, let day):
            row.minutes = minutes
            row.day = day
        case .exception(let name): row.target = name.description
        }
        return row
    }
}
