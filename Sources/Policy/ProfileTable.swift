import DomainMatch

/// One profile: a child (or the parents' devices) with a name, the rules of its policy,
/// and the activity counters its queries add to. Immutable; a new policy for one profile
/// is a new `Profile` in a new table, the others kept as they are.
public final class Profile: Sendable {
    public let name: String
    public let rules: PolicyRules
    /// Query and rewrite counts, kept across tables for the whole run.
    public let activity: ActivityCounters
    /// Minutes spent on each app service, kept across tables for the whole run.
    public let usage: ServiceUsage
    /// The parent's overrides on the gateway (docs/parent-page.md#overrides): a change is
    /// a new `Profile` in a new table, like a new policy.
    public let overrides: Overrides

    public init(
        name: String, rules: PolicyRules, activity: ActivityCounters = ActivityCounters(),
        usage: ServiceUsage = ServiceUsage(), overrides: Overrides = .none
    ) {
        self.name = name
        self.rules = rules
        self.activity = activity
        self.usage = usage
        self.overrides = overrides
    }

    /// The same profile with other overrides: its rules, counters and minutes kept.
    public func with(_ overrides: Overrides) -> Profile {
        Profile(name: name, rules: rules, activity: activity, usage: usage, overrides: overrides)
    }

    /// The name of the built-in unfiltered profile (`default_profile = none`).
    public static let noneName = "none"
}

/// A profile is the one object its table made: two are equal when they are the same, so a
/// new policy for a profile of the same name is a different profile.
extension Profile: Equatable {
    public static func == (lhs: Profile, rhs: Profile) -> Bool { lhs === rhs }
}

/// Who belongs to which profile, as the configuration says it: each profile's client
/// entries (addresses, CIDRs, MACs) and proxy user, and the profile for everyone else.
/// Checked by whoever builds it (the configuration names file and line); here only used.
public struct ProfileRoster: Sendable, Equatable {
    public struct Member: Sendable, Equatable {
        public var name: String
        public var clients: [ClientEntry]
        public var proxyUser: String?

        public init(name: String, clients: [ClientEntry] = [], proxyUser: String? = nil) {
            self.name = name
            self.clients = clients
            self.proxyUser = proxyUser
        }
    }

    public var members: [Member]
    /// A member's name, or `none` (unfiltered).
    public var defaultProfile: String

    public init(members: [Member], defaultProfile: String) {
        self.members = members
        self.defaultProfile = defaultProfile
    }

    /// One profile named `name` covering everyone: `run --policy FILE` without profiles.
    public static func single(_ name: String = "default") -> ProfileRoster {
        ProfileRoster(members: [Member(name: name)], defaultProfile: name)
    }
}

/// An entry of a profile's `clients` list: an address or CIDR, or a MAC address.
public enum ClientEntry: Sendable, Hashable, CustomStringConvertible {
    case range(AddressRange)
    case mac(MACAddress)

    /// `192.168.1.20`, `192.168.1.0/24`, `2001:db8::/64` or `aa:bb:cc:dd:ee:ff`.
    public init?(_ text: String) {
        if let mac = MACAddress(text) {
            self = .mac(mac)
        } else if let range = AddressRange(text) {
            self = .range(range)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .range(let range): range.prefixLength == range.address.bitWidth ? "\(range.address)" : "\(range)"
        case .mac(let mac): mac.description
        }
    }
}

/// Which profile governs which client (docs/configuration.md#profiles), first that
/// applies: a valid proxy user, the client's MAC address, the longest matching address or
/// CIDR, then `default_profile`. Built aside with the snapshot and swapped whole; choosing
/// costs no system call and allocates nothing (dictionary probes on values, a scan of a
/// short list of ranges).
public struct ProfileTable: Sendable {
    /// Every profile of the roster in its order, then `none` when something uses it.
    public let profiles: [Profile]
    private let byUser: [String: Int]
    private let byMAC: [MACAddress: Int]
    /// The parent's device assignments on the gateway, before the roster's entries.
    private let byAssignment: [MACAddress: Int]
    /// Longest prefix first, so the first range that contains an address is the longest.
    private let ranges: [(range: AddressRange, profile: Int)]
    private let fallback: Int
    private let learnsMACs: Bool

    /// One profile covering everyone.
    public init(single rules: PolicyRules, name: String = "default", activity: ActivityCounters = ActivityCounters()) {
        profiles = [Profile(name: name, rules: rules, activity: activity)]
        byUser = [:]
        byMAC = [:]
        byAssignment = [:]
        ranges = []
        fallback = 0
        learnsMACs = false
    }

    /// `profiles` must hold a profile for every member of `roster` (by name); `none` is
    /// added, unfiltered, when the roster's default is `none`. Members without a profile
    /// are left out (their clients get the default).
    ///
    /// `assignments` are the parent's device assignments on the gateway (MAC → profile
    /// name): they come before the roster's MAC and address entries; one naming no
    /// profile of the table is left out. `learnsMACs`: every client's MAC is looked up,
    /// even when nothing is assigned by one (the parent's page lists devices by MAC).
    public init(
        roster: ProfileRoster, profiles given: [Profile], assignments: [MACAddress: String] = [:],
        learnsMACs: Bool = false
    ) {
        var profiles: [Profile] = []
        var index: [String: Int] = [:]
        for member in roster.members {
            guard let profile = given.first(where: { $0.name == member.name }) else { continue }
            index[member.name] = profiles.count
            profiles.append(profile)
        }
        if index[roster.defaultProfile] == nil {
            index[roster.defaultProfile] = profiles.count
            profiles.append(
                given.first { $0.name == roster.defaultProfile }
                    ?? Profile(name: Profile.noneName, rules: .unfiltered))
        }
        var byUser: [String: Int] = [:]
        var byMAC: [MACAddress: Int] = [:]
        var ranges: [(range: AddressRange, profile: Int)] = []
        for member in roster.members {
            guard let position = index[member.name] else { continue }
            if let user = member.proxyUser, !user.isEmpty { byUser[user] = position }
            for entry in member.clients {
                switch entry {
                case .mac(let mac): byMAC[mac] = position
                case .range(let range): ranges.append((range, position))
                }
            }
        }
        var byAssignment: [MACAddress: Int] = [:]
        for (mac, name) in assignments {
            guard let position = index[name] ?? profiles.firstIndex(where: { $0.name == name }) else { continue }
            byAssignment[mac] = position
        }
        ranges.sort { $0.range.prefixLength > $1.range.prefixLength }
        self.profiles = profiles
        self.byUser = byUser
        self.byMAC = byMAC
        self.byAssignment = byAssignment
        self.learnsMACs = learnsMACs
        self.ranges = ranges
        fallback = index[roster.defaultProfile] ?? 0
    }

    /// How a client was matched: the order of `choose`, in one place.
    private enum Match {
        case user(String, position: Int)
        case assigned(MACAddress, position: Int)
        case mac(MACAddress, position: Int)
        case range(AddressRange, position: Int)
        case fallback
    }

    /// The first rule that applies to `client`. Allocates nothing: dictionary probes on
    /// values, then a scan of the ranges, longest prefix first.
    private func match(_ client: Client) -> Match {
        if let user = client.proxyUser, let position = byUser[user] { return .user(user, position: position) }
        if let mac = client.mac {
            if let position = byAssignment[mac] { return .assigned(mac, position: position) }
            if let position = byMAC[mac] { return .mac(mac, position: position) }
        }
        if let address = client.address {
            for entry in ranges where entry.range.contains(address) {
                return .range(entry.range, position: entry.profile)
            }
        }
        return .fallback
    }

    /// The profile that governs `client` now.
    public func choose(_ client: Client) -> Profile {
        switch match(client) {
        case .user(_, let position), .assigned(_, let position), .mac(_, let position), .range(_, let position):
            profiles[position]
        case .fallback: profiles[fallback]
        }
    }

    /// Which rule chose a client's profile, for whoever explains it (`check --client`, the
    /// parent's Devices page).
    public enum Reason: Sendable, Equatable {
        case proxyUser(String)
        /// The parent's assignment on the page.
        case assigned(MACAddress)
        /// A MAC entry of the configuration's `clients`.
        case mac(MACAddress)
        /// An address or CIDR entry of the configuration's `clients`, the longest that matched.
        case address(ClientEntry)
        /// None matched: `default_profile`.
        case fallback
    }

    public func reason(_ client: Client) -> Reason {
        switch match(client) {
        case .user(let user, _): .proxyUser(user)
        case .assigned(let mac, _): .assigned(mac)
        case .mac(let mac, _): .mac(mac)
        case .range(let range, _): .address(.range(range))
        case .fallback: .fallback
        }
    }

    /// How `client` was matched, for `check --client`.
    public func why(_ client: Client) -> String {
        switch reason(client) {
        case .proxyUser(let user): "proxy user \(user)"
        case .assigned(let mac): "MAC \(mac), assigned on the page"
        case .mac(let mac): "MAC \(mac)"
        case .address(let entry): "address \(entry)"
        case .fallback: "default_profile"
        }
    }

    public func rules(for client: Client) -> PolicyRules { choose(client).rules }

    public func named(_ name: String) -> Profile? { profiles.first { $0.name == name } }

    /// Whether a MAC or address entry covers `client` (its proxy user aside), for
    /// `proxy_auth = required`.
    public func coversByDevice(_ client: Client) -> Bool {
        var device = client
        device.proxyUser = nil
        if case .fallback = match(device) { return false }
        return true
    }

    /// Whether any profile lists a MAC address, or the page learns devices: only then can
    /// a MAC choose a profile.
    public var usesMACs: Bool { learnsMACs || !byMAC.isEmpty || !byAssignment.isEmpty }
}
