import Blocklists
import Config
import EventLoop
import Glibc
import HTTPClient
import Policy
import Store
import Sync
import SystemIO
import TLS

/// What a `run` enforces before any network call, and how it keeps it current
/// (docs/sync.md#polling), for each profile: a local policy file (watched, no API); or a
/// registered profile's last good policy from the store, else `initial_policy`, then
/// synced with the API; or, unregistered and without a file, `initial_policy`.
package struct SyncSetup {
    /// Only what the rest of the start needs: a decoded policy is dropped as soon as its
    /// rules are built, so that the strings of every profile's lists are never in memory
    /// together (with 16 profiles of 5,000 names each they were 7 MB at the start's peak,
    /// left behind as free heap the process kept).
    package enum Mode {
        case localFile(path: String, version: Int)
        case synced(DeviceIdentity)
        case unregistered
    }

    package struct Enforced {
        let source: ProfilePlan.Source
        let mode: Mode
        let rules: PolicyRules
    }

    let plan: ProfilePlan
    let profiles: [Enforced]

    /// The profile name of a gateway without profile sections and without a registration.
    package static let profile = "default"

    init(plan: ProfilePlan, stateDirectory: String, store: Store, log: Logger) throws(GatewayError) {
        self.plan = plan
        let registered = Set(DeviceIdentity.registeredProfiles(stateDirectory: stateDirectory))
        var profiles: [Enforced] = []
        for source in plan.sources {
            profiles.append(
                try Self.enforced(
                    source, registered: registered.contains(source.name), stateDirectory: stateDirectory, store: store,
                    log: log))
        }
        self.profiles = profiles
    }

    private static func enforced(
        _ source: ProfilePlan.Source, registered: Bool, stateDirectory: String, store: Store, log: Logger
    ) throws(GatewayError) -> Enforced {
        let profile = source.name
        if let path = source.policyPath {
            let policy = try PolicyFile.load(path)
            // So `status` shows what a local file enforces, like a synced policy.
            var state = (try? store.syncState(profile: profile)) ?? SyncState(profile: profile)
            state.appliedVersion = policy.version
            state.policyID = policy.policyID
            try? store.saveSyncState(state)
            log.info(
                "policy_loaded",
                [
                    ("profile", profile), ("path", path), ("version", "\(policy.version)"),
                    ("policy_id", policy.policyID),
                ])
            return Enforced(
                source: source, mode: .localFile(path: path, version: policy.version), rules: PolicyRules(policy))
        }
        let initial = source.initialPolicy.rules
        guard registered else {
            log.warn(
                "no_policy",
                [
                    ("profile", profile),
                    (
                        "note",
                        "no policy file and no registered device; enforcing initial_policy "
                            + source.initialPolicy.rawValue + " (see phosra-gate register)"
                    ),
                ])
            return Enforced(source: source, mode: .unregistered, rules: initial)
        }
        let identity: DeviceIdentity
        do { identity = try DeviceIdentity.load(stateDirectory: stateDirectory, profile: profile) } catch {
            throw .usage("\(error)")
        }
        var cached: CompiledPolicy?
        if let stored = try? store.policy(profile: profile) {
            do { cached = try CompiledPolicy.decode(stored.json) } catch {
                log.warn("cached_policy_unreadable", [("profile", profile), ("error", "\(error)")])
            }
        }
        log.info(
            "enforcing",
            [
                ("profile", profile), ("source", cached == nil ? "initial_policy" : "cached"),
                ("version", "\(cached?.version ?? 0)"),
            ])
        return Enforced(source: source, mode: .synced(identity), rules: cached.map { PolicyRules($0) } ?? initial)
    }

    /// The rules each profile starts with.
    var policies: [String: PolicyRules] {
        Dictionary(profiles.map { ($0.source.name, $0.rules) }, uniquingKeysWith: { first, _ in first })
    }

    /// The local policy files to watch, per profile.
    var watched: [(profile: String, path: String)] {
        profiles.compactMap { enforced in
            if case .localFile(let path, _) = enforced.mode { return (enforced.source.name, path) }
            return nil
        }
    }

    var localVersions: [String: Int] {
        var versions: [String: Int] = [:]
        for enforced in profiles {
            if case .localFile(_, let version) = enforced.mode { versions[enforced.source.name] = version }
        }
        return versions
    }

    /// The sync thread: hit flushes and heartbeats always; API polls for a registered profile.
    func service(
        daemon: Daemon, settings: Settings, options: RunOptions, store: Store, aggregator: HitAggregator,
        activity: ActivityBook, flushObserver: HitFlusher.Observer? = nil, log: Logger, clock: any Clock
    )
        throws(GatewayError) -> SyncService
    {
        let now = SyncTime(clock)
        var syncs: [ProfileSync] = []
        // One for every part of the sync: a full disk is said once, not by each.
        let storeHealth = StoreHealth()
        var timing = SyncSchedule.Timing()
        timing.pollInterval = max(1000, settings[Key.pollInterval].wholeMilliseconds)
        timing.fullSyncInterval = max(1000, settings[Key.fullSyncInterval].wholeMilliseconds)
        timing.revokeAfter = settings[Key.revokeAfter].wholeMilliseconds
        timing.backoffMax = max(1000, settings[Key.backoffMax].wholeMilliseconds)
        for enforced in profiles {
            guard case .synced(let identity) = enforced.mode else { continue }
            let api = try Self.api(identity: identity, settings: settings, options: options, clock: clock)
            let name = enforced.source.name
            do {
                syncs.append(
                    try ProfileSync(
                        profile: name, childID: identity.childID, api: api, store: store, timing: timing,
                        now: now, keepOnNoPolicy: enforced.source.onNoPolicy == .keep,
                        apply: { rules in daemon.replace(profile: name, rules: rules) },
                        evaluate: { [weak daemon] policy, rules in
                            // The lists and catalogue in force now: a list update or SIGHUP
                            // since the start is in the report, and the start's trie is not
                            // kept alive by it.
                            guard let builder = daemon?.builder else { return [] }
                            return EnforcementReport.results(
                                for: policy, rules: rules, listed: builder.lists.present, services: builder.services)
                        },
                        log: storeHealth.filtering { event, fields in log.info(event, fields) }))
            } catch {
                throw .usage("\(error)")
            }
        }
        var intervals = SyncService.Intervals()
        intervals.report = max(1000, settings[Key.reportInterval].wholeMilliseconds)
        intervals.historyRetention = max(60_000, settings[Key.hitRetention].wholeMilliseconds)
        let started = now.wallSeconds
        let listeners =
            options.dnsListen.map { "dns \($0)" } + options.proxyListen.map { "proxy \($0)" }
            + options.transparentListen.map { "transparent \($0)" }
        do {
            return try SyncService(
                store: store,
                flusher: HitFlusher(
                    aggregator: aggregator, store: store, queueMax: max(1, settings[Key.hitQueueMax]),
                    historyMax: max(1, settings[Key.hitHistoryMax]),
                    namesPerMinute: max(0, settings[Key.hitNamesPerMinute]), observer: flushObserver),
                profiles: syncs, activity: activity.counters(for: plan.flushedProfiles),
                usage: Self.usageSources(daemon: daemon, activity: activity, profiles: plan.flushedProfiles),
                localVersions: localVersions,
                intervals: intervals,
                heartbeat: {
                    // The clock floor goes forward with the heartbeat (every 5 s).
                    FlooredClock.write(options.stateDirectory, clock.wall())
                    return Heartbeat(
                        pid: getpid(), startedAt: started, updatedAt: clock.wall().unixSeconds,
                        version: Gateway.version, listeners: listeners)
                },
                clock: clock, storeHealth: storeHealth, log: { event, fields in log.info(event, fields) })
        } catch {
            throw .usage("cannot start the sync thread: \(error)")
        }
    }

    /// App minutes for the sync thread: each profile's, the day in the gateway's zone, the
    /// catalogue and the budgets of the snapshot in force.
    static func usageSources(daemon: Daemon, activity: ActivityBook, profiles: [String]) -> UsageSources {
        let zone = daemon.builder.zone
        return UsageSources(
            usage: activity.usage(for: profiles),
            localDay: { zone.localDateTime(at: $0).daysSince1970 },
            services: { [weak daemon] in daemon?.builder.services ?? .empty },
            budgets: { [weak daemon] in daemon?.pipeline.snapshot.engine.budgets(at: $0) ?? [:] })
    }

    /// The HTTPS client for the API: verification against the system store or `ca_file`,
    /// timeouts for a server that may be cold-starting (docs/sync.md); `doctor` waits less.
    package static func api(
        identity: DeviceIdentity, settings: Settings, options: RunOptions,
        clock: any Clock, connectTimeout: Duration = .seconds(15), requestTimeout: Duration = .seconds(30)
    ) throws(GatewayError) -> PhosraHTTPAPI {
        let baseText = settings.isSet(Key.api) ? settings[Key.api] : identity.api
        let base: HTTPURL
        do { base = try HTTPURL(baseText) } catch { throw .config(settings.error(Key.api, "\(error)")) }
        var context: TLSContext?
        if let caFile = options.caFile {
            do { context = try TLSContext(caFile: caFile) } catch {
                throw .config(settings.error(Key.caFile, "\(error)"))
            }
        }
        let client = HTTPClient(
            tls: context, connectTimeout: connectTimeout, requestTimeout: requestTimeout,
            userAgent: PhosraHTTPAPI.userAgent(version: Gateway.version), clock: clock)
        return PhosraHTTPAPI(base: base, key: identity.key, client: client)
    }
}
