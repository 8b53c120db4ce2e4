import DomainMatch
import ParentPage
import Policy
import Store

/// What a parent decided on the gateway's page, as snapshots are made with it: each
/// profile's live overrides and the devices assigned to profiles (docs/parent-page.md).
/// Read from the store at start and after every change the page makes.
package struct ParentState: Sendable, Equatable {
    package var overrides: [String: Overrides]
    package var assignments: [MACAddress: String]
    /// Whether the page is served: then every device is known by its MAC address (the
    /// neighbour table is read), so the parent can see and assign each one.
    package var learnsDevices: Bool

    package static let empty = ParentState(overrides: [:], assignments: [:])

    package init(overrides: [String: Overrides], assignments: [MACAddress: String], learnsDevices: Bool = false) {
        self.overrides = overrides
        self.assignments = assignments
        self.learnsDevices = learnsDevices
    }

    /// The live overrides and the assignments stored in `store` at `now`.
    package static func load(
        from store: Store, now: Int64, learnsDevices: Bool = false
    ) throws(StoreError)
        -> ParentState
    {
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
        return ParentState(
            overrides: overrides.mapValues(Overrides.init), assignments: assignments, learnsDevices: learnsDevices)
    }

    /// `profile` with the overrides the parent set for it.
    package func applied(to profile: Profile) -> Profile {
        guard let set = overrides[profile.name], !set.isEmpty else { return profile }
        return profile.with(set)
    }
}
