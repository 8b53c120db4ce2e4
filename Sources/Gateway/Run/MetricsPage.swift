import Blocklists
import DNSProxy
import DomainMatch
import EventLoop
import Glibc
import HTTPProxy
import Locks
import Metrics
import Notify
import Policy
import Store
import Sync
import Synchronization
import SystemIO

/// Counts blocks for `/metrics` on their way to the hit aggregator: by reason kind (not
/// the rule), category, profile and source, all of bounded cardinality (never a name or a
/// client).
package struct CountingHitRecorder: HitRecorder {
    let next: any HitRecorder
    let blocks = LabeledCounter(labelNames: ["reason", "category", "profile", "source"])
    /// Each label set made once: counting a block whose labels were seen before makes no
    /// array (docs/performance.md#allocations-per-query). As bounded as the counter's.
    private let made = MadeLabels()

    private struct Labels: Hashable {
        let reason: Reason
        let category: Category?
        let profile: String
        let source: HitSource
    }

    /// A class around the lock, which cannot be copied with the recorder.
    private final class MadeLabels: Sendable {
        let lock = Lock<[Labels: [String]]>([:])
    }

    package func record(_ hit: Hit) {
        let key = Labels(reason: hit.reason, category: hit.category, profile: hit.profile, source: hit.source)
        let labels = made.lock.withLock { made in
            if let index = made.index(forKey: key) { return made.values[index] }
            let labels = [hit.reason.rawValue, hit.category?.id ?? "", hit.profile, hit.source.rawValue]
            if made.count < blocks.limit { made[key] = labels }
            return labels
        }
        blocks.add(labels)
        next.record(hit)
    }
}

/// What `/metrics` shows (docs/operations.md#metrics), in Prometheus's text format: read
/// from the counters the loops keep, the store (hits queued, sync state), the lists and
/// `/proc/self`, at each scrape.
package struct MetricsPage {
    let dns: DNSMetrics
    let proxy: ProxyMetrics
    let blocks: LabeledCounter
    let activity: ActivityBook
    let store: Store
    let profiles: [String]
    /// The list files and the names of the lists in force, at the scrape (nil once the
    /// daemon is gone).
    let lists: @Sendable () -> (inputs: ListInputs, names: Int)?
    let startedAt: Int64
    /// Proxy connections open now, across the loops.
    let openConnections: @Sendable () -> Int
    /// DNS-over-TCP connections: open now and shed at a cap.
    let tcp: ConnectionCaps<IPAddress>
    /// The loop threads, for how long their turns take.
    let loops: [EventLoop]
    /// Failed writes to the store (a full disk), counted by the sync thread.
    let storeHealth: StoreHealth
    /// The hits' in-memory windows, for what their bound folded and dropped.
    let windows: HitAggregator
    /// `lan_interfaces` and what was refused from elsewhere; nil when not set.
    let lan: LANInterfaces?
    /// When the flush of hits and the notifier last finished a round.
    let rounds: Rounds

    func render(now: Int64) -> String {
        var page = Exposition()
        page.family("phosra_gate_dns_queries_total", .counter, "DNS queries by question type and how they ended")
        for (row, type) in DNSMetrics.types.enumerated() {
            for (column, outcome) in DNSMetrics.outcomes.enumerated() {
                let value = dns.queries.value(row: row, column: column)
                if value > 0 {
                    page.sample("phosra_gate_dns_queries_total", [("type", type), ("outcome", outcome)], value)
                }
            }
        }
        page.family(
            "phosra_gate_blocks_total", .counter, "blocked queries and requests by reason, category, profile, door")
        for (labels, value) in blocks.values {
            page.sample("phosra_gate_blocks_total", Array(zip(blocks.labelNames, labels)), value)
        }
        page.family("phosra_gate_queries_total", .counter, "queries and proxy requests counted per profile")
        for name in profiles {
            page.sample("phosra_gate_queries_total", [("profile", name)], activity.counters(for: name).totals.queries)
        }
        page.family("phosra_gate_rewrites_total", .counter, "safe-search rewrites per profile")
        for name in profiles {
            page.sample("phosra_gate_rewrites_total", [("profile", name)], activity.counters(for: name).totals.rewrites)
        }
        page.family("phosra_gate_cache_hits_total", .counter, "DNS answers served from the cache")
        page.sample("phosra_gate_cache_hits_total", dns.cacheHits.value)
        page.family("phosra_gate_cache_misses_total", .counter, "DNS questions the cache could not answer fresh")
        page.sample("phosra_gate_cache_misses_total", dns.cacheMisses.value)
        page.family("phosra_gate_cache_stale_answers_total", .counter, "stale answers served while upstreams were slow")
        page.sample("phosra_gate_cache_stale_answers_total", dns.staleAnswers.value)
        page.family("phosra_gate_upstream_latency_seconds", .histogram, "time to an upstream's accepted answer")
        for (upstream, histogram) in dns.upstream.latency.all {
            page.histogram("phosra_gate_upstream_latency_seconds", [("upstream", upstream)], histogram)
        }
        page.family(
            "phosra_gate_upstream_errors_total", .counter, "failed upstream attempts (timeout, error, failover)")
        for (labels, value) in dns.upstream.errors.values {
            page.sample("phosra_gate_upstream_errors_total", [("upstream", labels[0])], value)
        }
        page.family("phosra_gate_proxy_connections_total", .counter, "proxy and transparent connections accepted")
        page.sample("phosra_gate_proxy_connections_total", proxy.connections.value)
        page.family("phosra_gate_proxy_connections_open", .gauge, "proxy and transparent connections open")
        page.sample("phosra_gate_proxy_connections_open", openConnections())
        page.family("phosra_gate_proxy_connections_shed_total", .counter, "proxy connections shed at proxy_max_conns")
        page.sample("phosra_gate_proxy_connections_shed_total", proxy.shed.value)
        page.family("phosra_gate_dns_tcp_connections_open", .gauge, "DNS-over-TCP connections open")
        page.sample("phosra_gate_dns_tcp_connections_open", tcp.count())
        page.family(
            "phosra_gate_dns_tcp_connections_shed_total", .counter, "DNS-over-TCP connections shed at a cap")
        page.sample("phosra_gate_dns_tcp_connections_shed_total", tcp.shedCount)
        page.family("phosra_gate_tunnels_total", .counter, "tunnels relayed (CONNECT and transparent)")
        page.sample("phosra_gate_tunnels_total", proxy.tunnels.value)
        page.family("phosra_gate_tunnels_open", .gauge, "tunnels relaying now")
        page.sample("phosra_gate_tunnels_open", proxy.tunnelsOpen.value)
        page.family("phosra_gate_tunnel_bytes_total", .counter, "bytes relayed through tunnels, both directions")
        page.sample("phosra_gate_tunnel_bytes_total", proxy.tunnelBytes.value)
        if let lan {
            page.family(
                "phosra_gate_off_lan_refused_total", .counter,
                "datagrams dropped and connections reset because they arrived off the lan_interfaces")
            for listener in LANListener.allCases {
                page.sample("phosra_gate_off_lan_refused_total", [("listener", listener.label)], lan.refused(listener))
            }
        }
        loopFamilies(&page)
        storeFamilies(&page)
        let current = lists()
        page.family("phosra_gate_list_names", .gauge, "names in the category lists")
        page.sample("phosra_gate_list_names", current?.names ?? 0)
        page.family("phosra_gate_list_age_seconds", .gauge, "age of each category's newest list file")
        var newest: [String: Int64] = [:]
        // Modification times are in nanoseconds, `now` in seconds.
        for file in current?.inputs.files ?? [] {
            newest[file.category.id] = max(newest[file.category.id] ?? 0, file.modified / 1_000_000_000)
        }
        for (category, modified) in newest.sorted(by: { $0.key < $1.key }) {
            page.sample("phosra_gate_list_age_seconds", [("category", category)], Int(max(0, now - modified)))
        }
        processFamilies(&page)
        return page.text
    }

    private func loopFamilies(_ page: inout Exposition) {
        page.family(
            "phosra_gate_loop_turn_seconds", .histogram,
            "time a loop thread spent on one wake-up (events, timers, tasks)")
        for (index, loop) in loops.enumerated() {
            page.histogram("phosra_gate_loop_turn_seconds", [("loop", "\(index)")], loop.turns)
        }
        page.family("phosra_gate_loop_turn_longest_seconds", .gauge, "the longest turn of each loop since the start")
        for (index, loop) in loops.enumerated() {
            let longest = Double(loop.longestTurn.load(ordering: .relaxed)) / 1e9
            page.sample("phosra_gate_loop_turn_longest_seconds", [("loop", "\(index)")], longest)
        }
    }

    private func storeFamilies(_ page: inout Exposition) {
        var counts: [(String, (queued: Int, batched: Int, deadLettered: Int, mergedPending: Int))] = []
        for name in profiles { if let count = try? store.queueCounts(profile: name) { counts.append((name, count)) } }
        page.family("phosra_gate_hits_queued", .gauge, "hit rows waiting to be reported, per profile")
        for (name, count) in counts {
            page.sample("phosra_gate_hits_queued", [("profile", name)], count.queued + count.batched)
        }
        page.family("phosra_gate_hits_dead_lettered", .gauge, "hit rows the API refused, kept aside, per profile")
        for (name, count) in counts {
            page.sample("phosra_gate_hits_dead_lettered", [("profile", name)], count.deadLettered)
        }
        let totals = profiles.compactMap { name in (try? store.boundTotals(profile: name)).map { (name, $0) } }
        page.family(
            "phosra_gate_hits_merged_total", .counter,
            "hit rows the queue and history bounds merged or dropped, and names folded into their rule, per profile")
        for (name, total) in totals {
            page.sample("phosra_gate_hits_merged_total", [("profile", name), ("bound", "queue")], total.queueRows)
            page.sample("phosra_gate_hits_merged_total", [("profile", name), ("bound", "history")], total.historyRows)
            page.sample("phosra_gate_hits_merged_total", [("profile", name), ("bound", "names")], total.namesFolded)
        }
        let window = windows.boundCounts
        page.family(
            "phosra_gate_hits_window_bound_total", .counter,
            "hits the in-memory window's bound folded into their rule or dropped, since the start")
        page.sample("phosra_gate_hits_window_bound_total", [("outcome", "folded")], window.folded)
        page.sample("phosra_gate_hits_window_bound_total", [("outcome", "dropped")], window.dropped)
        page.family(
            "phosra_gate_hits_flushed_timestamp_seconds", .gauge,
            "the last flush of hits to the store whose notifications and summaries were looked at, unix seconds")
        page.sample("phosra_gate_hits_flushed_timestamp_seconds", Int(rounds.flushed.load(ordering: .acquiring)))
        page.family("phosra_gate_hits_flushes_total", .counter, "flushes of hits to the store, each looked at as above")
        page.sample("phosra_gate_hits_flushes_total", rounds.flushes.load(ordering: .acquiring))
        if let notifier = rounds.notifier {
            let queue = try? store.noticeQueueState()
            page.family(
                "phosra_gate_notify_round_timestamp_seconds", .gauge,
                "the start of the notifier's last finished round, unix seconds")
            page.sample("phosra_gate_notify_round_timestamp_seconds", Int(notifier.lastRound))
            page.family("phosra_gate_notifications_waiting", .gauge, "events not yet delivered: new or to be retried")
            if let queue { page.sample("phosra_gate_notifications_waiting", queue.waiting) }
        }
        page.family(
            "phosra_gate_store_write_failures_total", .counter, "writes to the store that failed (a full disk)")
        page.sample("phosra_gate_store_write_failures_total", storeHealth.failedWrites)
        let states = (try? store.allSyncStates()) ?? []
        page.family("phosra_gate_policy_version", .gauge, "policy version each profile enforces")
        for state in states {
            page.sample("phosra_gate_policy_version", [("profile", state.profile)], state.appliedVersion)
        }
        page.family("phosra_gate_sync_last_success_timestamp_seconds", .gauge, "last successful sync per profile")
        for state in states {
            if let success = state.lastSuccessAt {
                page.sample(
                    "phosra_gate_sync_last_success_timestamp_seconds", [("profile", state.profile)], Int(success))
            }
        }
        page.family("phosra_gate_sync_failing", .gauge, "1 while a profile's last sync attempt failed")
        for state in states {
            let failing = state.lastErrorAt.map { $0 >= (state.lastSuccessAt ?? 0) } ?? false
            page.sample("phosra_gate_sync_failing", [("profile", state.profile)], failing ? 1 : 0)
        }
    }

    private func processFamilies(_ page: inout Exposition) {
        page.family("phosra_gate_start_time_seconds", .gauge, "when the daemon started, unix seconds")
        page.sample("phosra_gate_start_time_seconds", Int(startedAt))
        var resident = 0
        if let bytes = try? Files.read("/proc/self/status") {
            let status = String(decoding: bytes, as: UTF8.self)
            for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
                resident = (Int(line.filter(\.isNumber)) ?? 0) * 1024
            }
        }
        page.family("phosra_gate_resident_memory_bytes", .gauge, "resident memory")
        page.sample("phosra_gate_resident_memory_bytes", resident)
        page.family("phosra_gate_open_files", .gauge, "open file descriptors")
        page.sample("phosra_gate_open_files", ((try? Files.list("/proc/self/fd")) ?? []).count)
    }
}
