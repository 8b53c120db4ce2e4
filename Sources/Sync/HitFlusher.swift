import Policy
import Store
import SystemIO

/// Moves what the proxies recorded into the store (docs/sync.md#hits): hits into the
/// durable queue and the local history, and the hour's activity counts. Called at least
/// every 5 s by the sync thread, and once more on shutdown, so a crash or power cut loses
/// at most the last 5 s.
public struct HitFlusher: Sendable {
    public let aggregator: HitAggregator
    public let store: Store
    /// `hit_queue_max`.
    public let queueMax: Int
    /// `hit_history_max`.
    public let historyMax: Int
    /// `hit_names_per_minute`, and the names seen this minute.
    public let names: NameRate

    /// What one flush did to keep the hits bounded (docs/sync.md#bounds).
    public struct Bounded: Sendable, Equatable {
        /// Rows the queue bound merged away or dropped.
        public var queueRows = 0
        /// Rows the history bound merged away or dropped.
        public var historyRows = 0
        /// Names folded into their rule past the rate or the window's bound.
        public var namesFolded = 0

        public init() {}
    }

    /// What one flush stored that the parent may want to hear of
    /// (docs/requests-and-notifications.md#events).
    public struct Facts: Sendable {
        /// Devices the store knew under no profile before.
        public var newDevices: [ClientSighting] = []
        /// The rows whose reason `attempts` selects.
        public var attempts: [HitRow] = []
        /// The budgets in force with today's minutes (the daily limit as `*online`).
        public var budgets: [BudgetStatusRow] = []
        /// Whether it stored hits or counts (the history and the day's counts grew).
        public var stored = false
        public var now: Int64 = 0
    }

    /// Told what each flush stored, on the flushing thread; `attempts` picks the hit
    /// reasons it wants rows of.
    public struct Observer: Sendable {
        public var attempts: @Sendable (_ reason: String) -> Bool
        public var observe: @Sendable (Facts) -> Void

        public init(
            attempts: @escaping @Sendable (String) -> Bool, observe: @escaping @Sendable (Facts) -> Void
        ) {
            self.attempts = attempts
            self.observe = observe
        }
    }

    public let observer: Observer?

    public init(
        aggregator: HitAggregator, store: Store, queueMax: Int, historyMax: Int = .max,
        namesPerMinute: Int = HitFlusher.defaultNamesPerMinute, observer: Observer? = nil
    ) {
        self.aggregator = aggregator
        self.store = store
        self.queueMax = queueMax
        self.historyMax = historyMax
        self.observer = observer
        names = NameRate(perMinute: namesPerMinute)
    }

    /// A child browsing meets tens of blocked names a minute (a page's trackers); a device
    /// asking random names meets thousands.
    public static let defaultNamesPerMinute = 300

    /// `activity` per profile; `versions` the policy version each profile enforces now.
    /// Returns what the bounds merged, dropped and folded.
    @discardableResult
    public func flush(
        activity: [String: ActivityCounters], versions: [String: Int], now: Int64, usage: UsageSources = .none
    ) throws(StoreError) -> Bounded {
        // Thousands of events after a burst: given back to the loops in slices, like the
        // store's statements (`Pacer`). Each event becomes its row as the store reaches it
        // (once for the queue, once for the history), so the rows of a burst are never all
        // in memory at once; making a row is paced with the statement that stores it. The
        // counts per profile read only what they count from the window's bytes. The
        // window's pages go back to the kernel when `events` goes.
        var pacer = Pacer(callsPerRead: 16)
        let events = aggregator.drain()
        // Decided once, before the rows are made twice (queue, history).
        let folded = names.decide(events, now: now)
        let rows = (0..<events.count).lazy.map { index in
            let event = events[index]
            let key = event.key
            var row = HitRow(
                profile: key.profile, domain: key.name, matched: event.rule, reason: key.reasonText,
                category: event.category?.id, client: key.client, source: key.source.rawValue,
                count: event.count, firstSeen: event.firstSeen, lastSeen: event.lastSeen,
                policyVersion: versions[key.profile] ?? 0, names: event.names)
            if folded[index] {
                row.domain = HitRow.foldedDomain(rule: event.rule)
                row.names = 1
            }
            return row
        }
        var bounded = Bounded()
        // Names folded by the window's bound and by the rate, per profile, for `status`.
        var foldedByProfile: [String: Int] = [:]
        var index = 0
        events.forEachName { profile, _, names in
            let count = folded[index] ? 1 : names
            if count > 0 { foldedByProfile[String(decoding: profile, as: UTF8.self), default: 0] += count }
            index += 1
        }
        bounded.namesFolded = foldedByProfile.values.reduce(0, +)
        var failure: StoreError?
        if !rows.isEmpty {
            do {
                bounded.queueRows = try store.enqueue(rows, maxRows: queueMax)
            } catch {
                // Nothing was queued (one transaction): the events wait in memory for the
                // next flush, and the activity below is left undrained for it too.
                aggregator.restore(events)
                throw error
            }
            // The local history is a convenience: a failure here must not put the events
            // back, or the queue would count them twice.
            do {
                bounded.historyRows = try store.recordHistory(rows, maxRows: historyMax)
                try store.addFoldedNames(foldedByProfile)
            } catch { failure = error }
        }
        let hour = now - now % 3600
        var byProfile: [String: (reasons: [String: Int], categories: [String: Int])] = [:]
        events.forEachTally { profileBytes, reasonBytes, category, count in
            pacer.checkpoint()
            // `category:adult` counts under `category`; the id is counted separately.
            let profile = String(decoding: profileBytes, as: UTF8.self)
            let kind = reasonBytes.firstIndex(of: UInt8(ascii: ":")) ?? reasonBytes.endIndex
            let reason = String(decoding: UnsafeRawBufferPointer(rebasing: reasonBytes[..<kind]), as: UTF8.self)
            byProfile[profile, default: ([:], [:])].reasons[reason, default: 0] += count
            if let category {
                byProfile[profile, default: ([:], [:])].categories[category.id, default: 0] += count
            }
        }
        var sightings: [ClientSighting] = []
        var stored = !rows.isEmpty
        for (profile, counters) in activity {
            let counts = counters.drain()
            sightings += Self.sightings(counts.clients, profile: profile, now: now)
            let blocks = byProfile[profile] ?? ([:], [:])
            guard counts.queries > 0 || !counts.rewritesByEngine.isEmpty || !blocks.reasons.isEmpty else { continue }
            try store.addActivity(
                profile: profile, hourStart: hour, queries: counts.queries, blocksByReason: blocks.reasons,
                blocksByCategory: blocks.categories, rewritesByEngine: counts.rewritesByEngine)
            stored = true
        }
        var facts = Facts()
        facts.now = now
        facts.stored = stored
        facts.newDevices = try store.recordSightings(sightings)
        facts.budgets = try saveUsage(usage, now: now)
        if let observer {
            facts.attempts = rows.filter { observer.attempts($0.reason) }
            observer.observe(facts)
        }
        if let failure { throw failure }
        return bounded
    }

    /// App minutes into the store: what changed since the last flush, today as a day each
    /// profile was served, and the budgets in force with today's minutes. On failure the
    /// minutes stay in memory for the next flush.
    @discardableResult
    func saveUsage(_ usage: UsageSources, now: Int64) throws(StoreError) -> [BudgetStatusRow] {
        guard !usage.usage.isEmpty else { return [] }
        let today = usage.localDay(now)
        var changes: [(profile: String, changes: [(key: ServiceUsage.Key, minutes: MinuteSet)])] = []
        var rows: [ServiceMinutesRow] = []
        for (profile, minutes) in usage.usage {
            let taken = minutes.takeUnsaved(today: today)
            changes.append((profile, taken))
            rows += taken.map {
                ServiceMinutesRow(profile: profile, day: $0.key.day, service: $0.key.service, minutes: $0.minutes.bytes)
            }
        }
        var budgets: [BudgetStatusRow] = []
        for (profile, limits) in usage.budgets(now) {
            guard let minutes = usage.usage[profile] else { continue }
            for (service, daily) in limits {
                budgets.append(
                    BudgetStatusRow(
                        profile: profile, service: service, day: today, dailyMinutes: daily,
                        used: minutes.minutes(service, day: today)))
            }
        }
        do {
            try store.saveServiceMinutes(
                rows, served: usage.usage.keys.map { ($0, today) }, budgets: budgets,
                merge: { stored, new in
                    guard let old = MinuteSet(bytes: stored), let added = MinuteSet(bytes: new) else { return new }
                    return old.union(added).bytes
                })
        } catch {
            for (profile, taken) in changes { usage.usage[profile]?.unsaved(taken) }
            throw error
        }
        return budgets
    }

    /// One row per device: a MAC seen from several addresses (IPv6 privacy addresses) is
    /// one device, listed with one of them.
    static func sightings(_ clients: [SeenClient: Int], profile: String, now: Int64) -> [ClientSighting] {
        var byDevice: [String: ClientSighting] = [:]
        for (client, queries) in clients {
            let key = client.key
            if var known = byDevice[key] {
                known.queries += queries
                byDevice[key] = known
            } else {
                byDevice[key] = ClientSighting(
                    profile: profile, client: key, address: client.address?.description,
                    mac: client.mac?.description, firstSeen: now, lastSeen: now, queries: queries)
            }
        }
        return byDevice.values.sorted { $0.client < $1.client }
    }
}
