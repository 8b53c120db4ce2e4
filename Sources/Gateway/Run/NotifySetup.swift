import Blocklists
import Config
import Devices
import DomainMatch
import HTTPClient
import Notify
import Store
import Sync
import SystemIO
import TLS

/// The parent's notifications in the daemon (docs/requests-and-notifications.md#notifications):
/// the receiver from the configuration, the thread that delivers, and the watches that
/// make events of what the gateway sees. Nil from `make` when `notify_url` is not set.
package final class NotifySetup: Sendable {
    let notifier: Notifier
    /// What the hit flushes tell the parent of (new devices, spent budgets, attempts).
    let flushWatch: FlushWatch
    /// The parent's page, where a tap on a notification goes.
    let page: String?

    private init(notifier: Notifier, flushWatch: FlushWatch, page: String?) {
        self.notifier = notifier
        self.flushWatch = flushWatch
        self.page = page
    }

    /// Lists older than this are trouble, for `doctor` and the notifications alike.
    package static let listsMaxAge: Int64 = 7 * 86_400
    /// A sync failing this long is trouble.
    static let syncFailingFor: Int64 = 3600

    static func make(
        _ settings: Settings, daemon: Daemon, store: Store, options: RunOptions, startedAt: Int64, log: Logger,
        clock: any Clock, checks: @escaping @Sendable () -> [FailingCheck],
        claimedElsewhere: (@Sendable (String, Int64) -> String?)? = nil
    ) throws(GatewayError) -> NotifySetup? {
        guard let url = settings[Key.notifyURL] else { return nil }
        var token: String?
        let tokenFile = settings[Key.notifyTokenFile]
        if !tokenFile.isEmpty {
            do {
                let text = String(decoding: try Files.read(tokenFile), as: UTF8.self)
                token = String(text.split(whereSeparator: { $0.isWhitespace }).first ?? "")
            } catch {
                throw .config(settings.error(Key.notifyTokenFile, "\(error)"))
            }
        }
        var context: TLSContext?
        if let caFile = options.caFile {
            do { context = try TLSContext(caFile: caFile) } catch {
                throw .config(settings.error(Key.caFile, "\(error)"))
            }
        }
        // A receiver that answers slowly holds this thread only; 10 s bounds a stop.
        let client = HTTPClient(
            tls: context, connectTimeout: .seconds(5), requestTimeout: .seconds(10), maxResponseBytes: 64 << 10,
            userAgent: "phosra-gate/\(Gateway.version)", clock: clock)
        let page = pageURL(settings)
        let listsFolderFiles = { @Sendable [weak daemon] () -> [ListInputs.File] in
            daemon?.builder.listInputs.files ?? []
        }
        // The probes cost a query to every upstream: only when their events are wanted.
        let checkWatch = settings[Key.notifyEvents].contains(.trouble) ? CheckWatch(checks: checks) : nil
        let notifier: Notifier
        do {
            notifier = try Notifier(
                target: NotifyTarget(url: url, format: settings[Key.notifyFormat], token: token),
                events: Set(settings[Key.notifyEvents]), bound: settings[Key.notifyQueueMax], store: store,
                client: client, clock: clock, log: log,
                watch: { now in
                    trouble(store: store, lists: listsFolderFiles(), startedAt: startedAt, now: now, page: page)
                        + (checkWatch?.due(now: now, page: page) ?? [])
                }, claimedElsewhere: claimedElsewhere)
        } catch {
            throw .usage("cannot start the notifications: \(error)")
        }
        let leasePath = settings[Key.dhcpLeases]
        let watch = FlushWatch(
            threshold: settings[Key.notifyCircumvention], page: page,
            appName: { [weak daemon] id in
                daemon?.builder.services.services.first { $0.id == id }?.name
            },
            deviceName: { sighting in deviceName(sighting, store: store, leasePath: leasePath) })
        return NotifySetup(notifier: notifier, flushWatch: watch, page: page)
    }

    /// What the hit flusher tells: its events, posted from the sync thread.
    var observer: HitFlusher.Observer {
        let watch = flushWatch
        let notifier = self.notifier
        return HitFlusher.Observer(attempts: FlushWatch.isAttempt) { facts in
            for notice in watch.notices(
                newDevices: facts.newDevices, attempts: facts.attempts, budgets: facts.budgets, now: facts.now)
            {
                notifier.post(notice)
            }
        }
    }

    /// The gateway's trouble now: each profile's sync failing for an hour, lists older
    /// than `listsMaxAge`.
    static func trouble(
        store: Store, lists: [ListInputs.File], startedAt: Int64, now: Int64, page: String?
    ) -> [Notice] {
        var out: [Notice] = []
        for state in (try? store.allSyncStates()) ?? [] {
            guard let error = state.lastError, let failedAt = state.lastErrorAt else { continue }
            let since = state.lastSuccessAt ?? startedAt
            guard failedAt >= since, now - since >= syncFailingFor else { continue }
            out.append(
                Notices.syncFailing(
                    profile: state.profile, lastSuccess: state.lastSuccessAt, error: error, now: now, page: page))
        }
        // `modified` is in nanoseconds.
        if let newest = lists.map({ $0.modified / 1_000_000_000 }).max(), now - newest > listsMaxAge {
            out.append(Notices.listsOld(newest: newest, maxAgeDays: Int(listsMaxAge / 86_400), now: now, page: page))
        }
        return out
    }

    /// The parent's name for a device, else the host name it gave the DHCP server.
    static func deviceName(_ sighting: ClientSighting, store: Store, leasePath: String) -> String? {
        guard let mac = sighting.mac else { return nil }
        if let named = (try? store.devices())?.first(where: { $0.mac == mac })?.name, !named.isEmpty {
            return named
        }
        guard !leasePath.isEmpty, let leases = try? DHCPLeases.read(path: leasePath) else { return nil }
        return leases.first { $0.mac.description == mac }?.hostName
    }

    /// `https://NAME:PORT/` of the parent's page: the first of `web_names`, else the
    /// first address it listens on that is not loopback, else the host's name.
    static func pageURL(_ settings: Settings) -> String? {
        let https =
            settings.isSet(Key.webListen)
            ? settings[Key.webListen]
            : PageSetup.defaultHosts(settings).map { ListenAddress(address: $0, port: PageSetup.defaultPort) }
        guard let first = https.first else { return nil }
        func url(_ host: String, _ port: UInt16) -> String { "https://\(host)\(port == 443 ? "" : ":\(port)")/" }
        if let name = settings[Key.webNames].first { return url(name, first.port) }
        if let listen = https.first(where: { !$0.address.isLoopback && !$0.address.isUnspecified }) {
            let host = listen.address.description
            return url(host.contains(":") ? "[\(host)]" : host, listen.port)
        }
        let host = PageSetup.hostName()
        return host.isEmpty ? nil : url(host, first.port)
    }

    func start() throws(GatewayError) {
        do { try notifier.start() } catch { throw .usage("cannot start the notifications: \(error)") }
    }

    func stop() { notifier.stop() }
}
