import Config
import DomainMatch
import ParentPage
import Policy
import Sync

/// The profiles a configuration describes (docs/configuration.md#profiles): who belongs to
/// which (the roster the engine chooses by) and where each gets its policy. Every rule
/// the configuration must follow is checked here, with errors that name file, line and key.
package struct ProfilePlan: Equatable {
    /// Where one profile's policy comes from.
    package struct Source: Equatable {
        package var name: String
        /// A local CompiledPolicy file (watched), else the API when the profile is registered.
        package var policyPath: String?
        package var initialPolicy: InitialPolicy
        var onNoPolicy: NoPolicyAction
    }

    package var roster: ProfileRoster
    package var sources: [Source]
    /// False for a configuration without `[profile]` sections: one profile for everyone,
    /// named after the registered device (or `default`).
    var configured: Bool

    /// The plan of `settings`. `registered` names the profiles with a device key; without
    /// profile sections the first of them (sorted) names the one profile.
    package static func from(_ settings: Settings, registered: [String]) throws(GatewayError) -> ProfilePlan {
        let plan = try roster(settings, registered: registered)
        // `web_allow_clients` may name profiles: only those of this plan.
        let names = Set(plan.roster.members.map(\.name) + [plan.roster.defaultProfile])
        for case .profile(let name) in settings[Key.webAllowClients] where !names.contains(name) {
            throw .config(
                settings.error(
                    Key.webAllowClients,
                    "\"\(name)\" is not an address, a CIDR, a MAC address or a profile (\(names.sorted().joined(separator: ", ")))"
                ))
        }
        return plan
    }

    private static func roster(_ settings: Settings, registered: [String]) throws(GatewayError) -> ProfilePlan {
        guard !settings.profiles.isEmpty else {
            let global = settings[Key.policy]
            let name = global.isEmpty ? registered.sorted().first ?? "default" : "default"
            return ProfilePlan(
                roster: .single(name),
                sources: [
                    Source(
                        name: name, policyPath: global.isEmpty ? nil : global,
                        initialPolicy: settings[Key.initialPolicy], onNoPolicy: settings[Key.onNoPolicy])
                ], configured: false)
        }
        var members: [ProfileRoster.Member] = []
        var sources: [Source] = []
        var owners: [ClientEntry: String] = [:]
        var users: [String: String] = [:]
        for (name, table) in settings.profiles {
            let clients = table[Key.clients]
            for entry in clients {
                if let other = owners[entry] {
                    throw .config(
                        ConfigError(
                            table.origin(Key.clients) ?? .flag("--clients"), key: Key.clients.name,
                            "\(entry) is in profiles \(other) and \(name)"))
                }
                owners[entry] = name
            }
            let user = table[Key.proxyUser]
            if !user.isEmpty {
                if let other = users[user] {
                    throw .config(
                        ConfigError(
                            table.origin(Key.proxyUser) ?? .flag("--proxy-user"), key: Key.proxyUser.name,
                            "\(user) is the proxy user of profiles \(other) and \(name)"))
                }
                users[user] = name
            }
            members.append(.init(name: name, clients: clients, proxyUser: user.isEmpty ? nil : user))
            // A top-level `policy` is every profile's that names none of its own.
            let local = table.isSet(Key.policy) ? table[Key.policy] : settings[Key.policy]
            sources.append(
                Source(
                    name: name, policyPath: local.isEmpty ? nil : local,
                    initialPolicy: table.isSet(Key.initialPolicy)
                        ? table[Key.initialPolicy] : settings[Key.initialPolicy],
                    onNoPolicy: table.isSet(Key.onNoPolicy) ? table[Key.onNoPolicy] : settings[Key.onNoPolicy]))
        }
        let chosen = settings[Key.defaultProfile]
        let defaultProfile: String
        if chosen.isEmpty {
            // Which policy an unknown device gets is the parent's choice, unless one profile
            // with no client list plainly covers everyone.
            guard members.count == 1, members[0].clients.isEmpty, members[0].proxyUser == nil else {
                // Missing, so it has no line: name the file the profiles came from.
                let file = settings.profiles.lazy.flatMap { $0.settings.values.values }.compactMap { setting in
                    if case .file(let path, _) = setting.origin { return ConfigError.Origin.file(path: path, line: 0) }
                    return nil
                }.first
                throw .config(
                    ConfigError(
                        file ?? .flag(Key.defaultProfile.flag), key: Key.defaultProfile.name,
                        "must be set when profiles list clients or proxy users: a profile name, or none"))
            }
            defaultProfile = members[0].name
        } else {
            guard chosen == Profile.noneName || members.contains(where: { $0.name == chosen }) else {
                throw .config(
                    settings.error(
                        Key.defaultProfile,
                        "\"\(chosen)\" is not a profile (\(members.map(\.name).joined(separator: ", ")), or none)"))
            }
            defaultProfile = chosen
        }
        return ProfilePlan(
            roster: ProfileRoster(members: members, defaultProfile: defaultProfile), sources: sources,
            configured: true)
    }

    /// The profiles whose activity and devices the sync thread moves into the store: every
    /// configured one, and `none` when unknown devices go unfiltered, so `status` names them.
    package var flushedProfiles: [String] {
        sources.map(\.name) + (roster.defaultProfile == Profile.noneName ? [Profile.noneName] : [])
    }
}
