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

/// What a `run` enforces before any network call, and how it keeps it current (docs/sync.md#polling):
/// a local `--policy` file (watched, no API); or a registered profile's last good policy
/// from the store, else `initial_policy`, then synced with the API.
struct SyncSetup {
    enum Mode {
        case localFile(path: String, policy: CompiledPolicy)
        case synced(DeviceIdentity, cached: CompiledPolicy?)
        case unregistered
    }

    let mode: Mode
    let rules: PolicyRules

    static let profile = "default"

    init(settings: Settings, stateDirectory: String, store: Store, log: Logger) throws(GatewayError) {
        let path = settings[Key.policy]
        if !path.isEmpty {
            let policy = try EngineOptions.policy(settings)
            mode = .localFile(path: path, policy: policy)
            rules = PolicyRules(policy)
            // So `status` shows what a local file enforces, like a synced policy.
            var state = (try? store.syncState(profile: Self.profile)) ?? SyncState(profile: Self.profile)
            state.appliedVersion = policy.version
            state.policyID = policy.policyID
            try? store.saveSyncState(state)
            return
        }
        let initial = settings[Key.initialPolicy].rules
        guard let profile = DeviceIdentity.registeredProfiles(stateDirectory: stateDirectory).sorted().first else {
            log.warn(
                "no_policy",
                [
                    (
                        "note",
                        "no --policy file and no registered device; enforcing initial_policy "
                            + settings[Key.initialPolicy].rawValue + " (see phosra-gate register)"
                    )
                ])
            mode = .unregistered
            rules = initial
            return
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
        mode = .synced(identity, cached: cached)
        rules = cached.map { PolicyRules($0) } ?? initial
        log.info(
            "enforcing",
            [
                ("profile", profile), ("source", cached == nil ? "initial_policy" : "cached"),
                ("version", "\(cached?.version ?? 0)"),
            ])
    }

    var policyPath: String? {
        if case .localFile(let path, _) = mode { return path }
        return nil
    }

    var localVersions: [String: Int] {
        if case .localFile(_, let policy) = mode { return [Self.profile: policy.version] }
        return [:]
    }

    /// The sync thread: hit flushes and heartbeats always; API polls for a registered profile.
    func service(
        daemon: Daemon, settings: Settings, options: RunOptions, store: Store, aggregator: HitAggregator,
        activity: ActivityCounters, lists: CategoryLists, log: Logger, clock: any Clock
    )
        throws(GatewayError) -> SyncService
    {
        let now = SyncTime(clock)
        var profiles: [ProfileSync] = []
        if case .synced(let identity, _) = mode {
            let api = try Self.api(identity: identity, settings: settings, options: options, clock: clock)
            var timing = SyncSchedule.Timing()
            timing.pollInterval = max(1000, settings[Key.pollInterval].wholeMilliseconds)
            timing.fullSyncInterval = max(1000, settings[Key.fullSyncInterval].wholeMilliseconds)
            timing.revokeAfter = settings[Key.revokeAfter].wholeMilliseconds
            timing.backoffMax = max(1000, settings[Key.backoffMax].wholeMilliseconds)
            do {
                profiles.append(
                    try ProfileSync(
                        profile: identity.profile, childID: identity.childID, api: api, store: store, timing: timing,
                        now: now,
                        keepOnNoPolicy: settings[Key.onNoPolicy] == .keep,
                        apply: { policy in daemon.replace(rules: policy.map { PolicyRules($0) } ?? .unfiltered) },
                        evaluate: { policy in
                            EnforcementReport.results(for: policy, rules: PolicyRules(policy), listed: lists.present)
                        },
                        log: { event, fields in log.info(event, fields) }))
            } catch {
                throw .usage("\(error)")
            }
        }
        var intervals = SyncService.Intervals()
        intervals.report = max(1000, settings[Key.reportInterval].wholeMilliseconds)
        intervals.historyRetention = max(60_000, settings[Key.hitRetention].wholeMilliseconds)
        let started = now.wallSeconds
        let listeners = options.dnsListen.map { "dns \($0)" } + options.proxyListen.map { "proxy \($0)" }
        do {
            return try SyncService(
                store: store,
                flusher: HitFlusher(aggregator: aggregator, store: store, queueMax: max(1, settings[Key.hitQueueMax])),
                profiles: profiles, activity: [Self.profile: activity], localVersions: localVersions,
                intervals: intervals,
                heartbeat: {
                    Heartbeat(
                        pid: getpid(), startedAt: started, updatedAt: clock.wall().unixSeconds,
                        version: Gateway.version, listeners: listeners)
                },
                clock: clock, log: { event, fields in log.info(event, fields) })
        } catch {
            throw .usage("cannot start the sync thread: \(error)")
        }
    }

    /// The HTTPS client for the API: verification against the system store or `ca_file`,
    /// timeouts for a server that may be cold-starting (docs/sync.md).
    static func api(
        identity: DeviceIdentity, settings: Settings, options: RunOptions,
        clock: any Clock
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
            tls: context, connectTimeout: .seconds(15), requestTimeout: .seconds(30),
            userAgent: PhosraHTTPAPI.userAgent(version: Gateway.version), clock: clock)
        return PhosraHTTPAPI(base: base, key: identity.key, client: client)
    }
}
