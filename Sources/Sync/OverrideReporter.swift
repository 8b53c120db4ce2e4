import Store

/// Sends each override a parent set or removed on the page as a `parent_override` report
/// (docs/parent-page.md#overrides), under the key of the profile it is for, and each device
/// the parent assigned or named under the key of the profile it is with (and of the one it
/// left), so the API keeps the trail the gateway's page shows. The store is the queue: a row is marked reported only
/// after a 202, so a dead API or a restart leaves it for a later round. One report per
/// change, on the profile's request budget: a parent makes a few a day.
public enum OverrideReporter {
    /// Returns how many changes were delivered.
    @discardableResult
    public static func send(
        for sync: ProfileSync, store: Store, now: SyncTime, log: (String, [(String, String)]) -> Void
    ) -> Int {
        guard let rows = try? store.unreportedOverrides(profile: sync.profile, limit: 20) else { return 0 }
        var delivered = 0
        let goOn = deliver(
            rows, for: sync, now: now, log: log, delivered: &delivered,
            payload: { ReportPayloads.parentOverride($0, at: now.wallSeconds) },
            mark: { try? store.markOverridesReported([$0]) }, subject: { ("id", "\($0.id)") })
        guard goOn, let devices = try? store.unreportedDevices(profile: sync.profile) else { return delivered }
        _ = deliver(
            devices, for: sync, now: now, log: log, delivered: &delivered,
            payload: { ReportPayloads.deviceAssignment($0, at: now.wallSeconds) },
            mark: { try? store.markDeviceReported($0) }, subject: { ("device", $0.device.mac) })
        return delivered
    }

    /// Each of `changes` as one report while the budget lasts, marked once the API took it
    /// or refused it for good (resending it each round would only hold back the ones after
    /// it; the store keeps the trail locally). False when the API said to stop.
    private static func deliver<Change>(
        _ changes: [Change], for sync: ProfileSync, now: SyncTime, log: (String, [(String, String)]) -> Void,
        delivered: inout Int, payload: (Change) -> [UInt8], mark: (Change) -> Void,
        subject: (Change) -> (String, String)
    ) -> Bool {
        for change in changes {
            guard sync.spendForReport(now) else { break }
            switch sync.deliver(payload(change), now: now) {
            case .accepted:
                mark(change)
                delivered += 1
            case .rejected(let why):
                mark(change)
                log("override_report_rejected", [("profile", sync.profile), subject(change), ("error", why)])
            case .stop:
                return false
            }
        }
        return true
    }
}

extension ReportPayloads {
    /// The payload of a `parent_override` report: one override as the page set it and, once
    /// removed, when and by whom. The same `override_id` ties a removal to its setting.
    struct ParentOverride: Encodable {
        let overrideID: Int64
        let profile: String
        let kind: String
        let start: String
        let end: String?
        let setBy: String
        let name: String?
        let app: String?
        let minutes: Int?
        let removed: Bool
        let removedAt: String?
        let removedBy: String?

        enum CodingKeys: String, CodingKey {
            case overrideID = "override_id"
            case profile, kind, start, end, name, app, minutes, removed
            case setBy = "set_by"
            case removedAt = "removed_at"
            case removedBy = "removed_by"
        }

        // `end` is sent as null (until resumed); the fields of other kinds are left out.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(overrideID, forKey: .overrideID)
            try container.encode(profile, forKey: .profile)
            try container.encode(kind, forKey: .kind)
            try container.encode(start, forKey: .start)
            try container.encode(end, forKey: .end)
            try container.encode(setBy, forKey: .setBy)
            try container.encodeIfPresent(name, forKey: .name)
            try container.encodeIfPresent(app, forKey: .app)
            try container.encodeIfPresent(minutes, forKey: .minutes)
            try container.encode(removed, forKey: .removed)
            try container.encodeIfPresent(removedAt, forKey: .removedAt)
            try container.encodeIfPresent(removedBy, forKey: .removedBy)
        }
    }

    public static func parentOverride(_ row: OverrideRow, at now: Int64) -> [UInt8] {
        encode(
            Envelope(
                reportType: "parent_override", reportedAt: timestamp(now),
                payload: ParentOverride(
                    overrideID: row.id, profile: row.profile, kind: row.kind, start: timestamp(row.startsAt),
                    end: row.endsAt.map(timestamp), setBy: row.setBy,
                    name: row.kind == "exception" ? row.target : nil,
                    app: row.kind == "app_bonus" ? row.target : nil, minutes: row.minutes,
                    removed: row.removedAt != nil, removedAt: row.removedAt.map(timestamp),
                    removedBy: row.removedBy)))
    }

    /// The payload of a `parent_override` report of kind `device`: a device as the parent
    /// assigned and named it, told to the profile it is with now, or (`removed`) to the one
    /// it left.
    struct DeviceAssignment: Encodable {
        let kind = "device"
        let mac: String
        let name: String?
        let profile: String
        let start: String
        let setBy: String
        let removed: Bool

        enum CodingKeys: String, CodingKey {
            case kind, mac, name, profile, start, removed
            case setBy = "set_by"
        }
    }

    public static func deviceAssignment(_ report: DeviceReport, at now: Int64) -> [UInt8] {
        encode(
            Envelope(
                reportType: "parent_override", reportedAt: timestamp(now),
                payload: DeviceAssignment(
                    mac: report.device.mac, name: report.device.name, profile: report.profile,
                    start: timestamp(report.device.changedAt), setBy: report.device.changedBy, removed: report.left)))
    }
}
