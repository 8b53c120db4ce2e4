import Blocklists
import CSystem
import Config
import DNSProxy
import DNSUpstream
import DomainMatch
import EventLoop
import Glibc
import HTTPProxy
import Locks
import Neighbours
import Policy
import ProxyCore
import Synchronization
import SystemIO

/// The running gateway: loop threads with their DNS servers and HTTP proxy, the policy
/// watcher and the signals. Built by `RunCommand`; `wait()` returns when it has shut down.
package final class Daemon: @unchecked Sendable {
    // Sendable: the mutable state is confined to loop 0 (signals, draining) or to the
    // control thread (watcher), or written once before the loops see it.
    let group: EventLoopGroup
    let pipeline: QueryPipeline
    /// Open proxy connections per device and in all, across loops (`proxy_max_conns_per_client`,
    /// `proxy_max_conns`).
    let proxyCaps: ProxyCaps
    /// Open DNS-over-TCP connections per client and in all, across loops (`tcp_max_per_client`,
    /// `tcp_max`).
    let tcpCaps: ConnectionCaps<IPAddress>
    /// Failed proxy logins per client, across loops (10 a minute, then 429).
    let proxyAuthFailures = AuthFailureLimiter()
    /// Where proxy logins are checked, off the loop threads, one at a time.
    let proxyLoginWorker = LoginWorker()
    /// The HTTP proxy's counts for `/metrics`, across loops.
    let proxyMetrics = ProxyMetrics()
    /// `lan_interfaces`, and what the listeners refused from elsewhere; nil when not set.
    let lan: LANInterfaces?
    let log: Logger
    /// The process's one clock (also every loop's): the control thread's watch interval.
    private let clock: any Clock
    /// What snapshots are made of: the builder (configuration, lists, roster) and the rules
    /// of each profile's policy in force. Changed by the policy watchers (control thread), a
    /// reload (control thread) and the sync (sync thread), so under a lock; each change
    /// publishes a new snapshot.
    private let parts: Lock<(builder: SnapshotBuilder, policies: [String: PolicyRules], parent: ParentState)>
    private var perLoop: [LoopServers] = []
    /// What the control (main) thread is asked to do; rung through `doorbell`.
    private enum Request { case reload, stop }
    private let requests = Lock<[Request]>([])
    private let doorbell: Doorbell
    /// Each local policy file and the profile it is for. Polled by the control thread only.
    private var watchers: [(profile: String, watcher: PolicyWatcher)] = []
    /// The marker of `blocklists update`. Polled by the control thread only.
    private let listsWatcher: ListsWatcher
    private static let watchInterval: Nanoseconds = 500_000_000
    private var signals: SignalSource?
    private var draining = false
    /// systemd (docs/configuration.md#systemd), when `run` was started by a `Type=notify`
    /// unit: STOPPING=1 on SIGTERM, and with a watchdog, WATCHDOG=1 from the control
    /// thread only while every loop thread answers its heartbeat. Set before `start`.
    var notifier: ServiceNotifier?
    /// When each loop last ran the heartbeat task the control thread sent it (monotonic).
    private var beats: [LoopBeat] = []
    /// Test-only (`PHOSRA_GATE_TEST_WEDGE`): SIGUSR2 wedges loop 0 for good, so a test can
    /// see the watchdog stop. Set before `start`.
    var wedgeOnSIGUSR2 = false
    /// False for a daemon run in a test's process (`Serve.Embedding`): the process's
    /// signals stay the test's, and the test delivers them with `deliver`. Set before `start`.
    var watchesSignals = true

    /// Makes a loop's upstream client, on that loop's thread.
    package typealias UpstreamFactory = (EventLoop) throws(GatewayError) -> any UpstreamResolving

    init(
        options: RunOptions, builder: SnapshotBuilder, policies: [String: PolicyRules],
        watched: [(profile: String, path: String)], listsWatcher: ListsWatcher, log: Logger, hits: any HitRecorder,
        clock: any Clock
    ) throws(GatewayError) {
        self.listsWatcher = listsWatcher
        self.log = log
        self.clock = clock
        parts = Lock((builder, policies, .empty))
        proxyCaps = ProxyCaps(options.proxy.capLimits)
        lan = options.lanInterfaces.isEmpty ? nil : LANInterfaces(options.lanInterfaces)
        tcpCaps = ConnectionCaps(options.tcpCapLimits)
        pipeline = QueryPipeline(
            snapshot: builder.make(policies: policies),
            cache: ResponseCache(capacity: options.cacheSize, serveStaleMax: options.serveStaleMax),
            rateLimit: options.rateLimit, hits: hits)
        do {
            group = try EventLoopGroup(loopCount: options.loopCount, name: "pg-dns", clock: clock)
            doorbell = try Doorbell()
        } catch {
            throw .usage("cannot start the event loops: \(error)")
        }
        watchers = watched.map { ($0.profile, PolicyWatcher(path: $0.path)) }
    }

    /// Binds every listener on every loop; logs one line per listener when all are up.
    func start(options: RunOptions, upstream: @escaping UpstreamFactory) throws(GatewayError) {
        for (index, loop) in group.loops.enumerated() {
            let pipeline = self.pipeline
            let log = self.log
            let tcpLimits = TCPLimits(
                idle: Nanoseconds(max(options.tcpIdle, 1)) * 1_000_000,
                messageTimeout: Nanoseconds(max(options.tcpReadTimeout, 1)) * 1_000_000)
            let tcpCaps = self.tcpCaps
            // DNS on the first `threads` loops, the proxy on the first `proxyThreads`; a loop
            // has its resolver either way, which the proxy looks names up through.
            let addresses = index < options.threads ? options.dnsListen.map { SocketAddress(listen: $0) } : []
            let proxyLoop = index < options.proxyThreads
            let proxyAddresses = proxyLoop ? options.proxyListen.map { SocketAddress(listen: $0) } : []
            let transparentAddresses = proxyLoop ? options.transparentListen.map { SocketAddress(listen: $0) } : []
            let proxySettings = options.proxy
            let caps = proxyCaps
            let authLimiter = proxyAuthFailures
            let loginWorker = proxyLoginWorker
            let metrics = proxyMetrics
            let lan = self.lan
            nonisolated(unsafe) let factory = upstream
            do {
                let servers = try loop.runSync { () throws -> LoopServers in
                    let driver = QueryDriver(loop: loop, pipeline: pipeline, upstream: try factory(loop))
                    // This loop's own view of the neighbour table (its netlink socket opens on
                    // first use, here on the loop thread); read for every DNS query (a MAC proves a
                    // UDP source for `status`) and every proxy connection (the caps count a device by it).
                    driver.neighbours = NeighbourCache()
                    // Before any listener: each asks the kernel for arrival interfaces as it is made.
                    driver.arrivalFilter = lan.map { ArrivalFilter($0) }
                    var proxy: ProxyLoop?
                    if !proxyAddresses.isEmpty || !transparentAddresses.isEmpty {
                        // On the DNS loop, through its driver: the same resolver, no hops.
                        let loopProxy = ProxyLoop(
                            loop: loop, driver: driver, snapshot: driver.snapshot, settings: proxySettings,
                            hits: pipeline.hits,
                            caps: caps, authLimiter: authLimiter, loginWorker: loginWorker, metrics: metrics,
                            log: log)
                        for address in proxyAddresses { try loopProxy.listen(on: address) }
                        for address in transparentAddresses { try loopProxy.listen(on: address, transparent: true) }
                        proxy = loopProxy
                    }
                    return try LoopServers(
                        driver: driver, addresses: addresses, tcp: (tcpLimits, tcpCaps), log: log, proxy: proxy)
                }
                perLoop.append(servers)
            } catch {
                throw .usage("cannot listen: \(error)")
            }
        }
        for address in options.dnsListen {
            log.info("listening", [("service", "dns"), ("udp", "\(address)"), ("tcp", "\(address)")])
        }
        for address in options.proxyListen { log.info("listening", [("service", "proxy"), ("tcp", "\(address)")]) }
        for address in options.transparentListen {
            log.info("listening", [("service", "transparent"), ("tcp", "\(address)")])
        }
        // The start decoded every profile's policy and built its rules, and freed what it
        // decoded: those pages go back to the system here, not left in the heap between
        // what the rules keep (docs/performance.md#memory-after-load).
        _ = malloc_trim(0)
        guard watchesSignals else { return }
        let first = group.loops[0]
        do {
            try first.runSync { () throws -> Void in
                let watched = [SIGTERM, SIGINT, SIGHUP, SIGUSR1] + (self.wedgeOnSIGUSR2 ? [SIGUSR2] : [])
                self.signals = try SignalSource(loop: first, signals: watched) {
                    [unowned self] signal in
                    self.signal(signal)
                }
            }
        } catch {
            throw .usage("cannot watch signals: \(error)")
        }
    }

    /// What `signal` would do, on loop 0 as a signal is handled there: for a daemon that
    /// does not watch the process's signals (a test's). SIGTERM drains and stops it.
    package func deliver(_ signal: Int32) {
        _ = group.loops[0].execute { [self] in self.signal(signal) }
    }

    /// Returns once every loop has finished the turn it is in (a task queued behind it has
    /// run): after a test moves the clock, the loops' timers then due have fired.
    package func waitForTurns() {
        for loop in group.loops { try? loop.runSync {} }
    }

    /// WATCHDOG=1 when every loop ran the heartbeat task sent at the last tick; then a new
    /// task to each.
    private func watchdogTick(probeSent: inout Nanoseconds) {
        if beats.allSatisfy({ $0.ranAt.load(ordering: .acquiring) >= probeSent }) { notifier?.send(["WATCHDOG=1"]) }
        probeSent = clock.now()
        let clock = self.clock
        for (loop, beat) in zip(group.loops, beats) {
            _ = loop.execute { beat.ranAt.store(clock.now(), ordering: .releasing) }
        }
    }

    private func checkPolicies() {
        for (profile, watcher) in watchers {
            switch watcher.poll() {
            case .loaded(let policy)?:
                replace(profile: profile, rules: PolicyRules(policy))
                log.info(
                    "policy_loaded",
                    [
                        ("profile", profile), ("path", watcher.path), ("version", "\(policy.version)"),
                        ("policy_id", policy.policyID),
                    ])
            case .rejected(let why)?:
                log.warn("policy_rejected", [("profile", profile), ("error", why)])
            case nil:
                break
            }
        }
    }

    private func signal(_ number: Int32) {
        switch number {
        case SIGTERM, SIGINT: drain()
        case SIGHUP: ask(.reload)
        case SIGUSR1:
            log.info("sync_requested", [])
            syncRequested?()
        case SIGUSR2 where wedgeOnSIGUSR2:
            log.warn("test_wedge", [("note", "loop 0 stops answering (PHOSRA_GATE_TEST_WEDGE)")])
            while true { sleep(3600) }
        default: break
        }
    }

    /// Set by `RunCommand`: re-reads configuration and lists (SIGHUP). Runs on the control
    /// thread, so rebuilding a million-name list never stalls a loop.
    var reloadRequested: (() -> Void)?
    /// SIGUSR1: a sync now (runs on loop 0; it only rings the sync thread).
    var syncRequested: (() -> Void)?
    /// Set by `RunCommand`: builds the category lists again after `blocklists update`
    /// replaced some. Runs on the control thread, like a reload.
    var listsUpdated: (() -> Void)?
    /// Runs on the control thread once queries have drained, before the loops stop:
    /// the last flush of hits.
    var beforeStop: (() -> Void)?

    private func ask(_ request: Request) {
        requests.withLock { $0.append(request) }
        doorbell.ring()
    }

    /// A new configuration or new lists (SIGHUP): a new roster moves devices between
    /// profiles at once; `policies` replaces the policies of the profiles it names (local
    /// files read again), the others keep theirs; `initial` is what a profile without a
    /// policy yet starts with; `watched` the policy files to watch from now on.
    func reload(
        builder: SnapshotBuilder, policies: [String: PolicyRules], initial: [String: PolicyRules],
        watched: [(profile: String, path: String)]
    ) {
        parts.withLock { parts in
            parts.builder = builder
            parts.policies.merge(policies) { _, new in new }
            // A profile new to the configuration starts on its initial policy.
            parts.policies.merge(initial) { old, _ in old }
            pipeline.rateLimiter.update(rate: builder.options.rateLimit)
            publish(
                parts.builder.make(policies: parts.policies, parent: parts.parent), proxy: parts.builder.options.proxy)
        }
        // Only the control thread touches the watchers, and reloads run on it.
        watchers = watched.map { ($0.profile, PolicyWatcher(path: $0.path)) }
    }

    /// The parts snapshots are made of now (for a list update to rebuild from).
    var builder: SnapshotBuilder { parts.withLock { $0.builder } }

    /// New category lists (built aside by `listsUpdated`), enforced from now on for every
    /// profile: the usual snapshot swap, so no query waits and none sees half of it.
    func replace(lists: CategoryLists, inputs: ListInputs, services: ServiceCatalogue) {
        parts.withLock { parts in
            parts.builder = parts.builder.with(lists: lists, inputs: inputs, services: services)
            publish(
                parts.builder.make(policies: parts.policies, parent: parts.parent), proxy: parts.builder.options.proxy)
        }
    }

    /// A new policy for one profile (its watched file, or the sync), enforced from now on;
    /// the other profiles keep theirs.
    func replace(profile: String, rules: PolicyRules) {
        parts.withLock { parts in
            parts.policies[profile] = rules
            publish(
                parts.builder.make(policies: parts.policies, parent: parts.parent), proxy: parts.builder.options.proxy)
        }
    }

    /// The parent's overrides and device assignments changed (the page, or the store read
    /// at start): enforced from the next query, and open connections decided again.
    package func replace(parent: ParentState) {
        parts.withLock { parts in
            guard parts.parent != parent else { return }
            parts.parent = parent
            publish(
                parts.builder.make(policies: parts.policies, parent: parts.parent), proxy: parts.builder.options.proxy)
        }
    }

    /// Swaps a new snapshot in: the pipeline's, then each loop's own copy, on its thread
    /// (the HTTP proxy's with its settings: its open tunnels are re-decided at once).
    /// Called under `parts`' lock, so snapshots are published in the order they were made.
    private func publish(_ snapshot: ProxySnapshot, proxy settings: ProxySettings) {
        pipeline.replace(snapshot)
        proxyCaps.update(settings.capLimits)
        for servers in perLoop {
            let driver = servers.driver
            nonisolated(unsafe) let unsafeDriver = driver
            let proxy = servers.proxy
            _ = driver.loop.execute {
                unsafeDriver.snapshot = snapshot
                proxy?.update(snapshot: snapshot, settings: settings)
            }
        }
    }

    /// Run on the control thread at every watch interval (the page waits there for its password).
    var watchTick: (() -> Void)?

    /// A start that failed half way: the loops stop, nothing is drained (control thread).
    func abandon() {
        group.shutdownGracefully()
        releaseHooks()
    }

    /// Once the loops have stopped. The hooks hold what holds the daemon (the sync, the
    /// page): let go, the daemon and its sockets are freed when `run` returns, not only
    /// when the process exits (a daemon run in a test's process).
    private func releaseHooks() {
        (reloadRequested, syncRequested, listsUpdated, beforeStop, watchTick) = (nil, nil, nil, nil, nil)
    }

    /// Proxy login checks waiting or running now (any thread).
    package var loginChecksWaiting: Int { proxyLoginWorker.checksWaiting }

    /// Proxy and transparent connections open now, across the loops (any thread).
    package func openProxyConnections() -> Int {
        perLoop.reduce(0) { $0 + ($1.proxy?.openConnections.load(ordering: .relaxed) ?? 0) }
    }

    /// SIGTERM: stop taking queries and proxy connections, let those in flight finish for
    /// up to 5 s, then stop.
    private func drain() {
        guard !draining else { return }
        draining = true
        log.info("draining", [])
        notifier?.send(["STOPPING=1", "STATUS=draining: finishing queries and connections in flight"])
        for servers in perLoop { _ = servers.driver.loop.execute { servers.stopListening() } }
        let deadline = clock.now() + 5_000_000_000
        waitForQuiet(deadline: deadline)
    }

    private func waitForQuiet(deadline: Nanoseconds) {
        let loop = group.loops[0]
        let busy = perLoop.reduce(0) {
            $0 + $1.driver.inFlight.load(ordering: .relaxed) + ($1.proxy?.openConnections.load(ordering: .relaxed) ?? 0)
        }
        if busy == 0 || clock.now() >= deadline {
            ask(.stop)
            return
        }
        loop.scheduleTimer(after: 50_000_000) { [weak self] in self?.waitForQuiet(deadline: deadline) }
    }

    /// The control thread (main): watches the policy files and the list update marker every
    /// half second and carries out reloads until the daemon has drained, then stops the
    /// loops. Decoding a policy, building its rules and building the category lists happen
    /// here, never on a loop: a 5,000-entry parent list took a loop 20 ms, and every query
    /// on it waited.
    func wait() {
        var nextWatch = clock.now() + Self.watchInterval
        // A quarter of systemd's interval: a loop that has not run its heartbeat task
        // within it misses the next ping, and a few missed pings get the daemon restarted.
        let beatInterval = notifier?.watchdogInterval.map { max($0 / 4, 10_000_000) }
        var nextBeat = clock.now()
        var probeSent: Nanoseconds = 0
        beats = group.loops.map { _ in LoopBeat() }
        while true {
            var timeout = nextWatch - min(nextWatch, clock.now())
            if beatInterval != nil { timeout = min(timeout, nextBeat - min(nextBeat, clock.now())) }
            _ = try? doorbell.wait(timeout: timeout, clock: clock)
            doorbell.drain()
            if let beatInterval, clock.now() >= nextBeat {
                watchdogTick(probeSent: &probeSent)
                nextBeat = clock.now() + beatInterval
            }
            if clock.now() >= nextWatch {
                checkPolicies()
                if listsWatcher.poll() { listsUpdated?() }
                watchTick?()
                nextWatch = clock.now() + Self.watchInterval
            }
            let pending = requests.withLock { requests in
                defer { requests.removeAll() }
                return requests
            }
            for request in pending {
                switch request {
                case .reload: reloadRequested?()
                case .stop:
                    beforeStop?()
                    group.shutdownGracefully()
                    releaseHooks()
                    log.info("stopped", [])
                    return
                }
            }
        }
    }
}

/// One loop's driver and servers, created and used on that loop's thread.
package final class LoopServers: @unchecked Sendable {
    // Sendable: built inside `runSync` on the loop and afterwards only touched there.
    let driver: QueryDriver
    /// The HTTP proxy on this loop, when `proxy_listen` names an address.
    let proxy: ProxyLoop?
    private var udp: [UDPServer] = []
    private var tcp: [TCPServer] = []

    init(
        driver: QueryDriver, addresses: [SocketAddress], tcp: (limits: TCPLimits, caps: ConnectionCaps<IPAddress>),
        log: Logger, proxy: ProxyLoop?
    )
        throws(SystemError)
    {
        self.driver = driver
        self.proxy = proxy
        for address in addresses {
            udp.append(try UDPServer(address: address, driver: driver, log: log))
            self.tcp.append(
                try TCPServer(address: address, driver: driver, limits: tcp.limits, caps: tcp.caps, log: log))
        }
    }

    func stopListening() {
        for server in udp { server.stopReading() }
        for server in tcp { server.close() }
        proxy?.stopAccepting()
    }
}

extension SocketAddress {
    init(listen: ListenAddress) {
        switch listen.address {
        case .v4(let bits): self.init(ipv4: bits, port: listen.port)
        case .v6(let high, let low): self.init(ipv6: high, low, port: listen.port)
        }
    }
}

/// When one loop last ran the control thread's heartbeat task.
package final class LoopBeat: Sendable {
    let ranAt = Atomic<Nanoseconds>(0)
}
