import Glibc
import Locks
import ParentPage
import Policy
import SharedStore
import Store
import SystemIO

/// The daemon's link to the shared store (`shared_store`, docs/two-gateways.md), on a
/// thread of its own (`pg-shared`): it writes what the parent changed here, reads what
/// changed on any gateway into the local store, and hands that to the daemon
/// (`changed`), which enforces from memory as before. A change elsewhere arrives by
/// `LISTEN`/`NOTIFY` within a moment, and by a read every `readInterval` seconds should a
/// notification be missed. When the server is away, the gateway goes on with what it has;
/// changes made meanwhile wait in the local store (marked unshared) and are written when
/// it is back, tried again with a backoff of 1 s doubling to 30 s.
package final class SharedSync: Sendable {
    static let readInterval: Int64 = 10
    static let backoffMax: Int64 = 30

    let url: String
    let passwordFile: String?
    let gateway: String
    private let store: Store
    /// App minutes and minutes online, counted here and on the other gateways.
    private let activity: ActivityBook
    /// The local day now (days since 1970 in the gateway's time zone).
    private let today: @Sendable () -> Int
    /// How long the hit history is kept (`hit_retention`, seconds): the shared store's too.
    private let retention: Int64
    /// The state directory, whose `web-password` is the page's password on every gateway.
    private let stateDirectory: String
    private let log: Logger
    private let clock: any Clock
    /// The local store took changes from the shared one.
    private let changed: @Sendable () -> Void
    private let worker: Worker

    init(
        url: String, passwordFile: String?, gateway: String, store: Store, activity: ActivityBook,
        today: @escaping @Sendable () -> Int, retention: Int64, stateDirectory: String, log: Logger,
        clock: any Clock, changed: @escaping @Sendable () -> Void
    ) throws(SystemError) {
        self.url = url
        self.passwordFile = passwordFile
        self.gateway = gateway
        self.store = store
        self.activity = activity
        self.today = today
        self.retention = retention
        self.stateDirectory = stateDirectory
        self.log = log
        self.clock = clock
        self.changed = changed
        worker = try Worker()
    }

    func start() throws(SystemError) {
        // Not SCHED_IDLE like the sync: a pause set on another gateway must hold here within
        // a second even while the loops keep both cores busy, and each round is brief.
        try worker.start(name: "pg-shared", priority: .normal) { [self] in loop() }
    }

    /// Something changed here: write it now rather than at the next read.
    func wake() { worker.ring() }

    func stop() { worker.stop() }

    /// This gateway's id among those sharing the store: kept in the state directory
    /// (`gateway-id`), made once from the host's name and a random part.
    static func gatewayID(stateDirectory: String, hostName: String) throws(SystemError) -> String {
        let path = stateDirectory + "/gateway-id"
        if let bytes = try? Files.read(path, limit: 256) {
            let text = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first ?? ""
            if !text.isEmpty { return String(text) }
        }
        let random = (0..<3).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.map {
            $0.count == 1 ? "0" + $0 : $0
        }
        let safe = hostName.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }.prefix(40)
        let id = (safe.isEmpty ? "gateway" : String(safe)) + "-" + random.joined()
        try Files.writeAtomically(path, Array((id + "\n").utf8), mode: 0o644)
        return id
    }

    /// The host, port and database of `url`, for logs and `status`: never its user or
    /// password.
    package static func place(_ url: String) -> String {
        var rest = Substring(url)
        for scheme in ["postgresql://", "postgres://"] where rest.hasPrefix(scheme) {
            rest = rest.dropFirst(scheme.count)
        }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if let query = rest.firstIndex(of: "?") { rest = rest[..<query] }
        return String(rest)
    }

    private func loop() {
        var shared: SharedStore?
        var backoff: Int64 = 1
        var away = Away()
        var nextPrune: Int64 = 0
        while !worker.isStopping {
            if shared == nil {
                do {
                    let opened = try SharedStore.open(
                        url: url, passwordFile: passwordFile, gateway: gateway, now: clock.wall().unixSeconds)
                    try opened.listen()
                    if try opened.adopt(store) {
                        for usage in activity.allUsages.values { usage.forgetShared() }
                        log.warn(
                            "shared_store",
                            [
                                ("state", "new_database"), ("at", Self.place(url)),
                                ("note", "it has fewer changes than this gateway read: everything is written again"),
                            ])
                    }
                    // Every minute of the day, whoever counted it: a gateway that was away
                    // (or killed) counts what the others counted meanwhile.
                    merge(try opened.facts(sinceDay: today()))
                    shared = opened
                    try? store.setSharedConnection(connected: true, since: clock.wall().unixSeconds, error: nil)
                    log.info("shared_store", [("state", "connected"), ("at", Self.place(url)), ("gateway", gateway)])
                } catch {
                    wentAway("unreachable", error, &away)
                    wait(seconds: backoff, socket: nil)
                    backoff = min(backoff * 2, Self.backoffMax)
                    continue
                }
            }
            guard let connection = shared else { continue }
            let minutes = takeMinutes()
            do throws(SharedStoreError) {
                do { try connection.push(from: store, minutes: minutes.facts) } catch {
                    minutes.giveBack()
                    throw error
                }
                let pulled = try connection.pull(into: store)
                merge(pulled.minutes)
                if pulled.changed { changed() }
                // The file's hash as this round knows it: set here, or as last agreed.
                let setHere = passwordSetHere()
                let known = setHere?.hash ?? ((try? store.sharedPageState().password) ?? nil)
                if let kept = try connection.pushPage(from: store, password: setHere) {
                    takePassword(kept, over: known)
                }
                if let password = try connection.pullPage(into: store) { takePassword(password, over: known) }
                // The day's history after the parent's changes: a batch a round, the
                // next round at once while more wait.
                let written = try connection.pushHistory(from: store)
                let read = try connection.pullHistory(into: store)
                let now = clock.wall().unixSeconds
                if now >= nextPrune {
                    try connection.pruneHistory(before: now - retention)
                    try connection.prunePage(now: now)
                    nextPrune = now + 600
                }
                // A whole round went through: the next failure starts from a short wait.
                backoff = 1
                away = Away()
                guard !written.more, !read.more else { continue }
                // A notification libpq read with the answers above came during this round,
                // perhaps after the snapshot was taken: then read again at once rather
                // than wait on a socket that has nothing more to say.
                guard try !connection.othersChanged() else { continue }
                wait(seconds: Self.readInterval, socket: connection.socket)
                _ = try connection.othersChanged()
            } catch {
                connection.close()
                shared = nil
                wentAway("lost", error, &away)
                // A round that fails for good (a row it cannot read, the local store) must
                // not become a loop of connections: the same wait as for a server away.
                wait(seconds: backoff, socket: nil)
                backoff = min(backoff * 2, Self.backoffMax)
            }
        }
        shared?.close()
    }

    /// Since when the shared store has been away, and the error last said.
    private struct Away {
        var since: Int64?
        var error: String?
    }

    /// The connection failed (`state`: `lost` or `unreachable`): recorded for `status` with
    /// the time it first went, and logged when the error is new.
    private func wentAway(_ state: String, _ error: SharedStoreError, _ away: inout Away) {
        let since = away.since ?? clock.wall().unixSeconds
        away.since = since
        guard away.error != error.description else { return }
        away.error = error.description
        try? store.setSharedConnection(connected: false, since: since, error: error.description)
        log.warn(
            "shared_store",
            [
                ("state", state), ("at", Self.place(url)), ("error", error.description),
                ("note", "enforcing from the last shared state; changes here wait"),
            ])
    }

    /// Today's minutes not yet written, as facts, and how to give them back should the
    /// write fail.
    private func takeMinutes() -> (facts: [SharedStore.MinuteFact], giveBack: () -> Void) {
        let day = today()
        var facts: [SharedStore.MinuteFact] = []
        var taken: [(ServiceUsage, [(key: ServiceUsage.Key, minutes: MinuteSet)])] = []
        for (profile, usage) in activity.allUsages {
            let changes = usage.takeUnshared(today: day)
            guard !changes.isEmpty else { continue }
            taken.append((usage, changes))
            for change in changes {
                facts += change.minutes.slots.map {
                    SharedStore.MinuteFact(
                        profile: profile, service: change.key.service, day: change.key.day, minute: $0)
                }
            }
        }
        return (facts, { for (usage, changes) in taken { usage.unshared(changes) } })
    }

    /// Minutes from the shared store counted here as well.
    private func merge(_ facts: [SharedStore.MinuteFact]) {
        var sets: [String: [ServiceUsage.Key: MinuteSet]] = [:]
        for fact in facts where fact.minute >= 0 && fact.minute < MinuteSet.slots {
            sets[fact.profile, default: [:]][
                ServiceUsage.Key(day: fact.day, service: fact.service), default: MinuteSet()
            ]
            .insert(slot: fact.minute)
        }
        for (profile, keys) in sets {
            let usage = activity.usage(for: profile)
            for (key, minutes) in keys { usage.mergeShared(key, minutes) }
        }
    }

    /// The page's password as its file here says, when it is not the one last agreed
    /// with the shared store: the parent ran `phosra-gate web-password` on this gateway.
    private func passwordSetHere() -> SharedStore.PagePassword? {
        guard let stored = WebPassword.storedHash(stateDirectory: stateDirectory),
            stored.hash != (try? store.sharedPageState().password) ?? nil
        else { return nil }
        return SharedStore.PagePassword(hash: stored.hash, changedAt: stored.writtenAt)
    }

    /// Makes `password` this gateway's page password (set on another gateway, later than
    /// here): the page reads the file again, and sessions of the old one end. `over` is
    /// the file's hash as this round read it: a file the parent changed since (and later
    /// than `password` was set) is kept, and written to the shared store next round.
    private func takePassword(_ password: SharedStore.PagePassword, over read: String?) {
        let current = WebPassword.storedHash(stateDirectory: stateDirectory)
        guard current?.hash != password.hash else { return }
        if let current, current.hash != read, current.writtenAt >= password.changedAt { return }
        do {
            try WebPassword.write(hash: password.hash, stateDirectory: stateDirectory)
            log.info("web_password", [("state", "set_from_shared_store"), ("changed_at", "\(password.changedAt)")])
        } catch {
            log.error(
                "web_password", [("error", "\(error)"), ("path", stateDirectory + "/" + WebPassword.fileName)])
        }
    }

    private func wait(seconds: Int64, socket: Int32?) {
        worker.wait(timeout: Nanoseconds(seconds) * 1_000_000_000, clock: clock, alongside: socket)
    }
}
