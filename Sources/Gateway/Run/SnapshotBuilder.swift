import Blocklists
import Config
import DNSProxy
import DNSUpstream
import DomainMatch
import Locks
import Policy
import Zoneinfo

/// Builds the proxy's snapshot from its parts. The category lists are built once and
/// shared; a new policy only rebuilds the parent's small lists (docs/benchmarks.md#targets: a policy change
/// never rebuilds the category trie).
package struct SnapshotBuilder {
    let options: RunOptions
    let decisions: DecisionOptions
    let zone: ZoneRules
    let lists: CategoryLists
    /// The list files `lists` came from: the packaged folder's with the state directory's
    /// copies over them (for the metrics' list ages, and where a list update looks again).
    let listInputs: ListInputs
    var listsFolder: String { listInputs.path }
    /// Who belongs to which profile (the configuration's; replaced by SIGHUP).
    let roster: ProfileRoster
    /// The apps as network services, from the lists folder's `services.json`.
    let services: ServiceCatalogue

    /// Query and rewrite counts survive every rebuild: one set per profile for the run.
    let activity: ActivityBook

    /// The same parts with other category lists and catalogue (a list update), read from `inputs`.
    func with(lists: CategoryLists, inputs: ListInputs, services: ServiceCatalogue) -> SnapshotBuilder {
        SnapshotBuilder(
            options: options, decisions: decisions, zone: zone, lists: lists, listInputs: inputs, roster: roster,
            services: services, activity: activity)
    }

    /// A snapshot enforcing `policies` (by profile name) with the parent's overrides and
    /// device assignments; a profile of the roster without a policy is unfiltered (which
    /// only happens between a configuration that adds a profile and its first policy).
    func make(policies: [String: PolicyRules], parent: ParentState = .empty) -> ProxySnapshot {
        var names = roster.members.map(\.name)
        if roster.defaultProfile == Profile.noneName { names.append(Profile.noneName) }
        let profiles = names.map { name in
            Profile(
                name: name, rules: policies[name] ?? .unfiltered, activity: activity.counters(for: name),
                usage: activity.usage(for: name), overrides: parent.overrides[name] ?? .none)
        }
        let engine = DecisionEngine(
            system: SystemRules(decisions), categories: lists.categorySet, zone: zone,
            profiles: ProfileTable(
                roster: roster, profiles: profiles, assignments: parent.assignments,
                learnsMACs: parent.learnsDevices),
            services: services)
        var servers: [DomainName: UpstreamSpec] = [:]
        for forward in options.localForward { servers[forward.zone] = forward.server }
        return ProxySnapshot(
            engine: engine, answers: AnswerBuilder(mode: options.blockMode, blockTTL: options.blockTTL),
            localZones: LocalZones(
                forwarded: Set(servers.keys), home: options.home?.name, homeAddresses: options.home?.addresses ?? []),
            allowClients: options.allowClients,
            minTTL: options.cacheMinTTL,
            maxTTL: options.cacheMaxTTL, upstreams: options.upstreams, localServers: servers,
            rebinding: RebindingGuard(
                enabled: !options.proxy.allowLocalDestinations, allow: options.rebindAllow,
                ownAddresses: options.proxy.ownAddresses))
    }
}

/// Each profile's activity counters and app minutes for the whole run, made on first use:
/// a reload or a new policy keeps them, so the hourly report counts every query of the
/// hour and a budget stays spent.
package final class ActivityBook: Sendable {
    private let counters = PerProfile { ActivityCounters() }
    private let usages: PerProfile<ServiceUsage>
    /// Told when any profile counts a minute for the first time (the shared store's
    /// thread, which writes it at once); nothing when nothing is shared.
    let newMinute = Hook()
    /// Told when a flush stored hits or hourly counts (the shared store's thread, which
    /// writes them for the other gateways' pages); nothing when nothing is shared.
    let stored = Hook()

    final class Hook: Sendable {
        private let body = Lock<(@Sendable () -> Void)?>(nil)
        func set(_ body: @escaping @Sendable () -> Void) { self.body.withLock { $0 = body } }
        func callAsFunction() { body.withLock { $0 }?() }
    }

    init() {
        let hook = newMinute
        usages = PerProfile { ServiceUsage(newMinute: { hook() }) }
    }

    func usage(for name: String) -> ServiceUsage { usages[name] }
    /// Every profile's minutes made so far.
    var allUsages: [String: ServiceUsage] { usages.all }
    func usage(for names: [String]) -> [String: ServiceUsage] { usages[names] }
    func counters(for name: String) -> ActivityCounters { counters[name] }
    func counters(for names: [String]) -> [String: ActivityCounters] { counters[names] }
}

/// One shared object per profile name, made on first use and kept.
package final class PerProfile<Value: AnyObject & Sendable>: Sendable {
    private let book = Lock<[String: Value]>([:])
    private let make: @Sendable () -> Value

    init(_ make: @escaping @Sendable () -> Value) { self.make = make }

    subscript(name: String) -> Value {
        book.withLock { book in
            if let existing = book[name] { return existing }
            let made = make()
            book[name] = made
            return made
        }
    }

    /// Every value made so far, by name.
    var all: [String: Value] { book.withLock { $0 } }

    subscript(names: [String]) -> [String: Value] {
        Dictionary(names.map { ($0, self[$0]) }, uniquingKeysWith: { first, _ in first })
    }
}
