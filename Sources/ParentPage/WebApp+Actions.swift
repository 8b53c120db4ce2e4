import DomainMatch
import FoundationEssentials
import Policy
import Store
import Zoneinfo

/// What a parent can change, the same from a form and from the API: each writes the store
/// and tells the gateway, which enforces it from the next query.
extension WebApp {
    /// The longest override the page sets: a week (a pause "until resumed" has no end).
    static let maxMinutes = 7 * 24 * 60

    func profile(named name: String) throws(Refusal) -> Profile {
        guard let profile = household.currentEngine().profiles.named(name), profile.name != Profile.noneName else {
            throw Refusal(404, "no profile \(name)")
        }
        return profile
    }

    func minutes(_ value: Int?) throws(Refusal) -> Int {
        guard let value, value >= 1, value <= Self.maxMinutes else {
            throw Refusal(400, "minutes must be 1 to \(Self.maxMinutes)")
        }
        return value
    }

    /// An end given as minutes from now, an RFC 3339 time, or neither (`open`: none).
    func end(minutes: Int?, until: String?, open: Bool) throws(Refusal) -> Int64? {
        if let until {
            guard let at = Times.parseRFC3339(until), at > now, at - now <= Int64(Self.maxMinutes) * 60 else {
                throw Refusal(400, "until must be an RFC 3339 time within the coming week")
            }
            return at
        }
        if let minutes { return now + Int64(try self.minutes(minutes)) * 60 }
        guard open else { throw Refusal(400, "give minutes or until") }
        return nil
    }

    func add(_ kind: Override.Kind, profile: String, end: Int64?, by client: String) throws -> Override {
        let override = Override(id: 0, profile: profile, kind: kind, start: now, end: end, setBy: "page \(client)")
        let row = try store.addOverride(override.row)
        household.parentChanged()
        log.info(
            "override_set",
            [("profile", profile), ("kind", override.kindName), ("id", "\(row.id)"), ("client", client)]
                + (end.map { [("until", Timestamp.rfc3339($0))] } ?? []))
        return Override(row) ?? override
    }

    func pause(_ profile: Profile, end: Int64?, client: String) throws -> Override {
        // A new pause replaces the one in force: "until tomorrow" after "15 min" is one pause.
        try store.endOverrides(profile: profile.name, kind: "pause", now: now, by: "page \(client)")
        return try add(.pause, profile: profile.name, end: end, by: client)
    }

    func resume(_ profile: Profile, client: String) throws {
        let ended = try store.endOverrides(profile: profile.name, kind: "pause", now: now, by: "page \(client)")
        household.parentChanged()
        log.info(
            "override_ended", [("profile", profile.name), ("kind", "pause"), ("count", "\(ended)"), ("client", client)])
    }

    /// More time: an extension of the cutoffs and, when the profile has a daily limit, as
    /// many minutes more of it today (so the limit does not cut the minutes given); or an
    /// app's bonus minutes for today.
    func extend(_ profile: Profile, minutes: Int, app: String?, client: String) throws -> Override {
        let engine = household.currentEngine()
        if let app {
            guard let service = engine.services.services.first(where: { $0.id == app }),
                profile.rules.dailyMinutes(for: service) != nil
            else { throw Refusal(400, "\(app) has no daily budget for \(profile.name)") }
            let day = engine.zone.localDateTime(at: now).daysSince1970
            return try add(
                .appBonus(service: app, minutes: minutes, day: day), profile: profile.name,
                end: Times.nextMidnight(after: now, zone: engine.zone), by: client)
        }
        if profile.rules.dailyLimitMinutes > 0 {
            let day = engine.zone.localDateTime(at: now).daysSince1970
            _ = try add(
                .dailyBonus(minutes: minutes, day: day), profile: profile.name,
                end: Times.nextMidnight(after: now, zone: engine.zone), by: client)
        }
        // Another extension while one lasts adds to it.
        let current = profile.overrides.extension(at: now)?.end ?? now
        return try add(.extension, profile: profile.name, end: max(current, now) + Int64(minutes) * 60, by: client)
    }

    func except(_ profile: Profile, name text: String, end: Int64?, client: String) throws -> Override {
        guard let name = try? QueryName.parse(text), name.labelCount >= 2 || IPAddress(text) != nil else {
            throw Refusal(400, "not a site name: \(text)")
        }
        return try add(.exception(name), profile: profile.name, end: end, by: client)
    }

    func removeOverride(id: Int64, client: String) throws {
        guard let removed = try store.removeOverride(id: id, now: now, by: "page \(client)") else {
            throw Refusal(404, "no override \(id) in force")
        }
        household.parentChanged()
        log.info("override_removed", [("profile", removed.profile), ("id", "\(id)"), ("client", client)])
    }

    /// Names a device or assigns it to a profile (an empty value clears it).
    func saveDevice(mac text: String, name: String?, profile: String?, client: String) throws {
        guard let mac = MACAddress(text) else { throw Refusal(400, "not a MAC address: \(text)") }
        if let profile, !profile.isEmpty { _ = try self.profile(named: profile) }
        if let name, name.utf8.count > 64 { throw Refusal(400, "a device name has at most 64 bytes") }
        try store.saveDevice(mac: mac.description, name: name, profile: profile, now: now, by: "page \(client)")
        household.parentChanged()
        log.info("device_saved", [("mac", mac.description), ("client", client)])
    }
}

/// Request bodies of the API.
enum JSONBody {
    static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8]) throws -> T {
        try JSONDecoder().decode(type, from: Data(body.isEmpty ? Array("{}".utf8) : body))
    }
}
