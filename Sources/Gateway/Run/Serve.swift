import Blocklists
import Config
import DNSProxy
import DNSUpstream
import EventLoop
import Glibc
import Notify
import Policy
import SharedStore
import Store
import Sync
import SystemIO
import Zoneinfo

/// The daemon of `phosra-gate run` (docs/dns.md): the store, the lists, the loops, the sync
/// and `/metrics` wired together, and what a reload or a list update rebuilds. Returns when
/// the daemon has stopped (SIGTERM, or its stand-in `Daemon.deliver`).
package enum Serve {
    /// The daemon run inside a test's process on a clock the test moves: the process's
    /// signals are left alone (`Daemon.deliver` stands in for them), the log goes to
    /// `logDescriptor`, the clock's wall time is not doubted for the kernel's sync state
    /// (a floor the state directory kept still applies), and `ready` is given the daemon
    /// once it would tell systemd READY=1.
    package struct Embedding: Sendable {
        let logDescriptor: Int32
        let ready: @Sendable (Daemon) -> Void

        package init(logDescriptor: Int32, ready: @escaping @Sendable (Daemon) -> Void) {
            self.logDescriptor = logDescriptor
            self.ready = ready
        }
    }

    /// `configPath` is `--config`'s file (nil: the default's, when there is one); `flags`
    /// the configuration keys given as flags, over the file. The clock is the process's.
    /// `selfCheck` is the round of `doctor`'s checks the daemon runs on itself, whose
    /// failures are `trouble` for the parent's notifications.
    package static func run(
        configPath: String?, flags: Settings, clock systemClock: any Clock,
        selfCheck: @escaping @Sendable (Settings, RunOptions) -> [FailingCheck] = { _, _ in [] },
        embedding: Embedding? = nil
    ) throws(GatewayError) {
        let fromCheckout = configPath == nil && !Files.exists(ConfigFile.defaultPath)
        let settings = try EngineOptions.settings(configFlag: configPath, flags: flags)
        let options = try RunOptions(settings, fromCheckout: fromCheckout)
        let log = Logger(format: options.logFormat, descriptor: embedding?.logDescriptor ?? 2)
        let floored = FlooredClock(
            base: systemClock, stateDirectory: options.stateDirectory,
            kernelKnows: getenv(Gateway.testClockVariable) == nil && embedding == nil)
        let clock: any Clock = floored
        if let floor = floored.floor {
            log.warn(
                "clock_behind",
                [
                    ("floor", "\(floor.unixSeconds)"), ("wall", "\(systemClock.wall().unixSeconds)"),
                    ("note", "the clock is not set yet: time rules use the last known time"),
                ])
        }
        for profile in options.plainPasswordProfiles {
            log.warn(
                "proxy_password",
                [("profile", profile), ("note", "written in clear; store a hash made by phosra-gate passwd")])
        }
        let lock: DirectoryLock
        do { lock = try DirectoryLock(directory: options.stateDirectory) } catch {
            throw GatewayError.usage("--state-dir: \(error)")
        }
        let store: Store
        do { store = try Store.open(directory: options.stateDirectory, now: clock.wall().unixSeconds) } catch {
            throw GatewayError.usage("\(error)")
        }
        if let note = store.recoveryNote { log.warn("store_recovered", [("note", note)]) }
        let plan = try ProfilePlan.from(
            settings, registered: DeviceIdentity.registeredProfiles(stateDirectory: options.stateDirectory))
        let setup = try SyncSetup(plan: plan, stateDirectory: options.stateDirectory, store: store, log: log)
        let activity = ActivityBook()
        // Before the lists are read: an update that lands meanwhile is still noticed.
        let listsWatcher = ListsWatcher(path: ListsLocator.updateMarker(options.stateDirectory))
        let aggregator = HitAggregator()
        let counting = CountingHitRecorder(next: aggregator)
        OpenFileLimit.raise(toCover: OpenFileLimit.needed(options), log: log)
        // The start's builder is held by the daemon alone: once a list update or a
        // reload replaces it, nothing else keeps its lists (and their mapping) alive.
        let daemon = try { () throws(GatewayError) -> Daemon in
            let builder = try makeBuilder(
                settings, options: options, roster: plan.roster, activity: activity, log: log)
            restoreUsage(store, into: activity, zone: builder.zone, now: clock.wall().unixSeconds, log: log)
            let daemon = try Daemon(
                options: options, builder: builder, policies: setup.policies, watched: setup.watched,
                listsWatcher: listsWatcher, log: log, hits: counting, clock: clock)
            restoreParent(store, into: daemon, now: clock.wall().unixSeconds, log: log)
            return daemon
        }()
        // The loops run from here on: whatever fails before `wait` must stop them.
        do throws(GatewayError) {
            daemon.reloadRequested = { [weak daemon] in
                guard let daemon else { return }
                reload(
                    daemon, configPath: configPath, flags: flags, running: options, activity: activity,
                    log: log)
            }
            daemon.listsUpdated = { [weak daemon] in
                guard let daemon else { return }
                reloadLists(daemon, log: log)
            }
            // Only a gateway that routes the LAN has a firewall whose refusals to read.
            let egress = settings[Key.lanInterfaces].isEmpty ? nil : try egressWatcher()
            let sharedStore = try sharedStore(settings, options: options, store: store)
            var claimedElsewhere: (@Sendable (String, Int64) -> String?)?
            // With a shared store: who sends an event several gateways may find.
            if let sharedStore, settings[Key.notifyURL] != nil {
                let claims = NoticeClaims(
                    url: sharedStore.url, passwordFile: sharedStore.passwordFile, gateway: sharedStore.gateway,
                    clock: clock)
                claimedElsewhere = { id, now in
                    switch claims.claim(id, now: now) {
                    case .mine: return nil
                    case .taken(let holder): return holder
                    case .unknown(let why):
                        // A parent told twice is better than not told; said, so a double is explained.
                        log.warn(
                            "notify_claim_unknown",
                            [("id", id), ("error", why), ("note", "sent from here; another gateway may send it too")])
                        return nil
                    }
                }
            }
            let notify = try NotifySetup.make(
                settings, daemon: daemon, store: store, options: options, startedAt: clock.wall().unixSeconds,
                log: log, clock: clock,
                checks: { selfCheck(settings, options) + (egress?.trouble().map { [$0] } ?? []) },
                claimedElsewhere: claimedElsewhere)
            let rounds = Rounds(notifier: notify?.notifier)
            let summaries = SummaryJob(
                minuteOfDay: settings[Key.summaryTime], store: store,
                profiles: plan.flushedProfiles.filter { $0 != Profile.noneName },
                zone: { [weak daemon, zone = daemon.builder.zone] in daemon?.builder.zone ?? zone },
                appName: { [weak daemon] id in daemon?.builder.services.services.first { $0.id == id }?.name },
                notify: notify, log: log)
            let sync = try setup.service(
                daemon: daemon, settings: settings, options: options, store: store,
                aggregator: aggregator, activity: activity,
                flushObserver: flushObserver(
                    notify: notify?.observer, summaries: summaries, stored: activity.stored, rounds: rounds),
                log: log, clock: clock)
            daemon.syncRequested = {
                sync.wake()
                notify?.notifier.retryNow()
            }
            let metricsServer = try metricsServer(
                settings, daemon: daemon, counting: counting, windows: aggregator, activity: activity, store: store,
                storeHealth: sync.storeHealth, profiles: plan.flushedProfiles, rounds: rounds, clock: clock)
            let reverseNames = try? ReverseNames(
                upstreams: options.upstreams, localForwards: settings[Key.localForward], clock: clock, log: log)
            let page = PageSetup(
                settings: settings, daemon: daemon, store: store, stateDirectory: options.stateDirectory,
                reverseNames: reverseNames, log: log, clock: clock)
            let shared = try sharedStore.map { sharedStore throws(GatewayError) in
                try sharedSync(
                    sharedStore, store: store, activity: activity,
                    today: { [weak daemon, zone = daemon.builder.zone] in
                        (daemon?.builder.zone ?? zone).localDateTime(at: clock.wall().unixSeconds).daysSince1970
                    }, retention: max(60, settings[Key.hitRetention].wholeMilliseconds / 1000),
                    stateDirectory: options.stateDirectory, page: page, log: log, clock: clock)
            }
            if let shared {
                activity.newMinute.set { shared.wake() }
                activity.stored.set { shared.wake() }
                page.sessions = { shared.wake() }
            }
            page.changed = {
                sync.reportSoon()
                shared?.wake()
            }
            if notify != nil || shared != nil {
                page.asked = { request, words in
                    shared?.wake()
                    guard let notify else { return }
                    notify.notifier.post(Notices.ask(request, what: words, page: notify.page))
                }
            }
            daemon.watchTick = { page.startIfReady() }
            daemon.beforeStop = {
                egress?.stop()
                shared?.stop()
                page.stop()
                reverseNames?.stop()
                metricsServer?.stop()
                sync.stop()
                // After the last flush, whose events are queued for the next start.
                notify?.stop()
            }
            let notifier = embedding == nil ? ServiceNotifier.fromEnvironment() : nil
            daemon.notifier = notifier
            daemon.wedgeOnSIGUSR2 = getenv(Gateway.testWedgeVariable) != nil && embedding == nil
            daemon.watchesSignals = embedding == nil
            try daemon.start(
                options: options,
                upstream: try Upstreams.factory(
                    options: options, log: log, metrics: daemon.pipeline.metrics.upstream, clock: floored))
            if let metricsServer, let listen = settings[Key.metricsListen] {
                do { try metricsServer.start() } catch { throw GatewayError.usage("metrics_listen: \(error)") }
                log.info("listening", [("service", "metrics"), ("tcp", "\(listen)")])
            }
            do { try sync.start() } catch { throw GatewayError.usage("cannot start the sync thread: \(error)") }
            try notify?.start()
            do { try shared?.start() } catch {
                throw GatewayError.usage("cannot start the shared store's thread: \(error)")
            }
            if let egress {
                let pipeline = daemon.pipeline
                do {
                    try egress.start(
                        file: settings[Key.egressAttempts], profiles: { pipeline.snapshot.engine.profiles },
                        hits: counting, log: log, clock: clock)
                } catch { throw GatewayError.usage("cannot start the egress thread: \(error)") }
            }
            page.startIfReady()
            // Listeners bound and every profile's policy in force: ready.
            notifier?.send(["READY=1", "STATUS=" + statusLine(options, profiles: plan.sources.count)])
            embedding?.ready(daemon)
        } catch {
            // What did start (the sync, `/metrics`, the notifier…) stops with the loops.
            daemon.beforeStop?()
            daemon.abandon()
            throw error
        }
        daemon.wait()
        store.close()
        withExtendedLifetime(lock) {}
    }

    /// What each hit flush feeds: the notifications' watch (when on) and the summaries.
    /// `stored`: told when a flush stored hits or counts (the shared store writes them);
    /// `rounds` when it and what it fed are done.
    static func flushObserver(
        notify: HitFlusher.Observer?, summaries: SummaryJob, stored: ActivityBook.Hook, rounds: Rounds
    ) -> HitFlusher.Observer {
        var attempts: @Sendable (String) -> Bool = { _ in false }
        if let notify { attempts = notify.attempts }
        return HitFlusher.Observer(
            attempts: attempts,
            observe: { facts in
                notify?.observe(facts)
                summaries.run(now: facts.now)
                if facts.stored { stored() }
                rounds.flushed.store(facts.now, ordering: .releasing)
                rounds.flushes.add(1, ordering: .releasing)
            })
    }

    /// `shared_store` as the two users of it need it: the URL, the password file and
    /// this gateway's id (read or made once); nil when this gateway shares nothing, and
    /// then a store shared before says nothing about it now (the page's notice, `status`).
    private static func sharedStore(
        _ settings: Settings, options: RunOptions, store: Store
    ) throws(GatewayError) -> (url: String, passwordFile: String?, gateway: String)? {
        guard let url = settings[Key.sharedStore] else {
            try? store.setSharedConnection(connected: false, since: 0, error: nil)
            return nil
        }
        let passwordFile = settings[Key.sharedStorePasswordFile]
        do {
            let gateway = try SharedSync.gatewayID(
                stateDirectory: options.stateDirectory, hostName: PageSetup.hostName())
            return (url, passwordFile.isEmpty ? nil : passwordFile, gateway)
        } catch {
            throw GatewayError.usage("shared_store: \(error)")
        }
    }

    /// The link to `shared_store` (docs/two-gateways.md); what it brings is enforced as the
    /// page's changes are.
    private static func sharedSync(
        _ shared: (url: String, passwordFile: String?, gateway: String), store: Store, activity: ActivityBook,
        today: @escaping @Sendable () -> Int, retention: Int64, stateDirectory: String, page: PageSetup, log: Logger,
        clock: any Clock
    ) throws(GatewayError) -> SharedSync {
        do {
            return try SharedSync(
                url: shared.url, passwordFile: shared.passwordFile, gateway: shared.gateway, store: store,
                activity: activity, today: today, retention: retention, stateDirectory: stateDirectory, log: log,
                clock: clock,
                changed: { [weak page] in page?.reloadParent() })
        } catch {
            throw GatewayError.usage("cannot start the shared store's thread: \(error)")
        }
    }

    private static func egressWatcher() throws(GatewayError) -> EgressWatcher {
        do { return try EgressWatcher() } catch { throw GatewayError.usage("cannot start the egress thread: \(error)") }
    }

    static func statusLine(_ options: RunOptions, profiles: Int) -> String {
        var parts = ["filtering \(profiles) profile\(profiles == 1 ? "" : "s")"]
        if !options.dnsListen.isEmpty {
            parts.append("DNS on " + options.dnsListen.map(\.description).joined(separator: ", "))
        }
        if !options.proxyListen.isEmpty {
            parts.append("proxy on " + options.proxyListen.map(\.description).joined(separator: ", "))
        }
        if !options.transparentListen.isEmpty {
            parts.append("transparent on " + options.transparentListen.map(\.description).joined(separator: ", "))
        }
        return parts.joined(separator: "; ")
    }

    /// Zone, category lists (from the compiled cache when it matches) and decision keys.
    static func makeBuilder(
        _ settings: Settings, options: RunOptions, roster: ProfileRoster, activity: ActivityBook,
        log: Logger
    ) throws(GatewayError) -> SnapshotBuilder {
        let zone = try EngineOptions.zone(settings)
        let inputs = try EngineOptions.listInputs(settings, stateDirectory: options.stateDirectory)
        var warnings = inputs.warnings
        let lists = ListCache.open(inputs, stateDirectory: options.stateDirectory, writeBack: true, warnings: &warnings)
        for warning in warnings { log.warn("lists", [("warning", warning)]) }
        log.info(
            "lists_loaded",
            [
                ("path", inputs.path), ("names", "\(lists.trie.nameCount)"),
                ("categories", lists.present.sorted().map(\.id).joined(separator: ",")),
            ])
        let services = ListsLocator.services(folder: inputs.path, stateDirectory: options.stateDirectory)
        if let warning = services.warning { log.warn("services", [("warning", warning)]) }
        return SnapshotBuilder(
            options: options, decisions: EngineOptions.decisionOptions(settings), zone: zone, lists: lists,
            listInputs: inputs, roster: roster, services: services.catalogue, activity: activity)
    }

    /// The parent's overrides and device assignments back from the store, enforced before
    /// the first query (docs/parent-page.md#overrides). A store that cannot be read leaves
    /// none, said once.
    static func restoreParent(_ store: Store, into daemon: Daemon, now: Int64, log: Logger) {
        do {
            daemon.replace(parent: try ParentState.load(from: store, now: now))
        } catch {
            log.warn("overrides_unreadable", [("error", "\(error)")])
        }
    }

    /// Today's app minutes back from the store, so a restart does not refill a budget
    /// (docs/services.md#budgets). A store that cannot be read leaves them empty, said once.
    static func restoreUsage(_ store: Store, into activity: ActivityBook, zone: ZoneRules, now: Int64, log: Logger) {
        let today = zone.localDateTime(at: now).daysSince1970
        do {
            for row in try store.serviceMinutes(day: today) {
                guard let minutes = MinuteSet(bytes: row.minutes) else { continue }
                activity.usage(for: row.profile).restore(ServiceUsage.Key(day: today, service: row.service), minutes)
            }
        } catch {
            log.warn("usage_unreadable", [("error", "\(error)"), ("note", "app budgets start from zero today")])
        }
    }

    /// After `blocklists update`: the category lists again, from the same folders (the
    /// state directory's new copies over the packaged ones), swapped in for every profile;
    /// configuration and policies stay as they are. The compiled file the update wrote is
    /// mapped when it matches, else the lists are built from the text here, off the loops.
    static func reloadLists(_ daemon: Daemon, log: Logger) {
        let builder = daemon.builder
        let stateDirectory = builder.options.stateDirectory
        let inputs: ListInputs
        do { inputs = try ListsLocator.inputs(folder: builder.listsFolder, stateDirectory: stateDirectory) } catch {
            log.error("lists_update_failed", [("error", "\(error)"), ("note", "keeping the running lists")])
            return
        }
        var warnings = inputs.warnings
        let lists = ListCache.open(inputs, stateDirectory: stateDirectory, writeBack: true, warnings: &warnings)
        for warning in warnings { log.warn("lists", [("warning", warning)]) }
        let services = ListsLocator.services(folder: builder.listsFolder, stateDirectory: stateDirectory)
        if let warning = services.warning { log.warn("services", [("warning", warning)]) }
        daemon.replace(lists: lists, inputs: inputs, services: services.catalogue)
        log.info(
            "lists_updated",
            [
                ("names", "\(lists.trie.nameCount)"), ("files", "\(inputs.files.count)"),
                ("categories", lists.present.sorted().map(\.id).joined(separator: ",")),
                ("services", "\(services.catalogue.services.count)"),
            ])
    }

    /// SIGHUP: configuration, profiles and lists again; a bad configuration keeps the
    /// running one. Listen addresses and the state directory need a restart. Local policy
    /// files are read again; synced policies stay as they are (a profile registered since
    /// the start is synced from the next start on).
    static func reload(
        _ daemon: Daemon, configPath: String?, flags: Settings, running: RunOptions,
        activity: ActivityBook, log: Logger
    ) {
        do {
            let settings = try EngineOptions.settings(configFlag: configPath, flags: flags)
            let options = try RunOptions(
                settings, fromCheckout: configPath == nil && !Files.exists(ConfigFile.defaultPath))
            if options.dnsListen != running.dnsListen || options.proxyListen != running.proxyListen
                || options.transparentListen != running.transparentListen
                || options.stateDirectory != running.stateDirectory
            {
                log.warn(
                    "reload",
                    [("note", "dns_listen, proxy_listen, transparent_listen and state_dir change only on restart")])
            }
            let plan = try ProfilePlan.from(
                settings, registered: DeviceIdentity.registeredProfiles(stateDirectory: running.stateDirectory))
            let builder = try makeBuilder(settings, options: options, roster: plan.roster, activity: activity, log: log)
            var policies: [String: PolicyRules] = [:]
            var initial: [String: PolicyRules] = [:]
            var watched: [(profile: String, path: String)] = []
            for source in plan.sources {
                if let path = source.policyPath {
                    policies[source.name] = PolicyRules(try PolicyFile.load(path))
                    watched.append((source.name, path))
                } else {
                    initial[source.name] = source.initialPolicy.rules
                }
            }
            daemon.reload(builder: builder, policies: policies, initial: initial, watched: watched)
            log.info("reloaded", [])
            daemon.notifier?.send(["STATUS=" + statusLine(running, profiles: plan.sources.count) + " (reloaded)"])
        } catch {
            log.error("reload_failed", [("error", "\(error)"), ("note", "keeping the running configuration")])
        }
    }

    /// `/metrics` on `metrics_listen`, which must be a loopback address (the page names
    /// profiles and upstreams: not for the LAN); nil when the key is not set.
    static func metricsServer(
        _ settings: Settings, daemon: Daemon, counting: CountingHitRecorder, windows: HitAggregator,
        activity: ActivityBook, store: Store, storeHealth: StoreHealth, profiles: [String], rounds: Rounds,
        clock: any Clock
    ) throws(GatewayError) -> MetricsServer? {
        guard let listen = settings[Key.metricsListen] else { return nil }
        guard listen.address.isLoopback else {
            throw .config(settings.error(Key.metricsListen, "\(listen) is not a loopback address"))
        }
        let page = MetricsPage(
            dns: daemon.pipeline.metrics, proxy: daemon.proxyMetrics, blocks: counting.blocks, activity: activity,
            store: store, profiles: profiles,
            // The lists in force now: a list update or a reload replaces them.
            lists: { [weak daemon] in daemon.map { ($0.builder.listInputs, $0.builder.lists.trie.nameCount) } },
            startedAt: clock.wall().unixSeconds,
            openConnections: { [weak daemon] in daemon?.openProxyConnections() ?? 0 }, tcp: daemon.tcpCaps,
            loops: daemon.group.loops, storeHealth: storeHealth, windows: windows, lan: daemon.lan, rounds: rounds)
        do {
            return try MetricsServer(address: SocketAddress(listen: listen)) {
                page.render(now: clock.wall().unixSeconds)
            }
        } catch {
            throw .usage("metrics_listen \(listen): \(error)")
        }
    }

    /// What `systemctl status` shows beside the unit.
}
