import DomainMatch
import FoundationEssentials
import Store
import TestSupport
import Testing

@testable import Policy
@testable import Sync

/// Hits bounded whatever the names (docs/sync.md#bounds): the window's bound folds new
/// names into their rule and then drops, counted; the flush folds names past the
/// per-minute rate; folded events carry their names to the store and the reports.
@Suite(.blocking) struct HitBoundTests {
    let blocked = Decision(.block, .blockedDomain, rule: "blocked.example")
    let client = IPAddress("192.168.1.20")

    func hit(_ name: String, _ decision: Decision? = nil, profile: String = "kid", at time: Int64 = 120) -> Hit {
        Hit(profile: profile, name: name, decision: decision ?? blocked, client: client, source: .dns, time: time)
    }

    @Test func aFullWindowFoldsNewNamesIntoTheirRuleThenDrops() {
        let aggregator = HitAggregator(eventsPerShard: 4)
        for index in 0..<10 { aggregator.record(hit("x\(index).blocked.example")) }
        // A name the window holds is still counted as itself.
        aggregator.record(hit("x0.blocked.example"))
        // Past the fold room (16), hits of new rules are dropped.
        for index in 0..<20 {
            aggregator.record(hit("a.r\(index).example", Decision(.block, .blockedDomain, rule: "r\(index).example")))
        }
        #expect(aggregator.boundCounts == (folded: 6 + 15, dropped: 5))
        let events = Array(aggregator.drain())
        #expect(events.count == 4 + 16)
        let named = events.filter { $0.names == 0 }.map(\.key.name).sorted()
        #expect(named == (0..<4).map { "x\($0).blocked.example" })
        #expect(events.first { $0.key.name == "x0.blocked.example" }?.count == 2)
        let folded = events.first { $0.key.name == "*.blocked.example" }
        #expect(folded?.count == 6 && folded?.names == 6 && folded?.rule == "blocked.example")
        #expect(folded?.key.client == "192.168.1.20")
        #expect(events.filter { $0.key.name.hasPrefix("*.r") }.count == 15)
        // The next window starts empty, with room again.
        aggregator.record(hit("y.blocked.example"))
        #expect(aggregator.drain().map(\.key.name) == ["y.blocked.example"])
    }

    /// A name asked again and again past the window's bound counts once in the folded
    /// event's names, however many blocks it adds.
    @Test func aNameFoldedAgainCountsOnceInItsEventsNames() {
        let aggregator = HitAggregator(eventsPerShard: 2)
        for index in 0..<2 { aggregator.record(hit("x\(index).blocked.example")) }
        for _ in 0..<5 { aggregator.record(hit("again.blocked.example")) }
        aggregator.record(hit("other.blocked.example"))
        let folded = Array(aggregator.drain()).first { $0.key.name == "*.blocked.example" }
        #expect(folded?.count == 6 && folded?.names == 2, "\(String(describing: folded))")
        // A new window counts its names afresh.
        for index in 0..<2 { aggregator.record(hit("x\(index).blocked.example")) }
        aggregator.record(hit("again.blocked.example"))
        #expect(Array(aggregator.drain()).first { $0.key.name == "*.blocked.example" }?.names == 1)
    }

    @Test func theFlushFoldsNamesPastTheRateOfEachProfile() throws {
        let scratch = try ScratchDirectory("pg-hit-bound")
        let store = try Store.open(directory: scratch.path, now: 1000)
        let aggregator = HitAggregator()
        let flusher = HitFlusher(aggregator: aggregator, store: store, queueMax: 1000, namesPerMinute: 5)
        for index in 0..<12 { aggregator.record(hit("x\(index).blocked.example")) }
        for index in 0..<3 { aggregator.record(hit("t\(index).blocked.example", profile: "teen")) }
        // A reason without a rule folds into `*`.
        for index in 0..<2 { aggregator.record(hit("d\(index).example", Decision(.block, .downtime))) }
        var bounded = try flusher.flush(activity: [:], versions: [:], now: 125)
        #expect(bounded.namesFolded == 9)
        #expect(try store.boundTotals(profile: "kid") == HitBoundTotals(namesFolded: 9))
        #expect(try store.queueCounts(profile: "teen").queued == 3)
        func rows(_ profile: String) throws -> [HitRow] {
            try #require(try store.nextBatch(profile: profile, now: 200)).events
        }
        let kid = try rows("kid")
        #expect(kid.filter { $0.names == 0 }.count == 5)
        let rule = try #require(kid.first { $0.domain == "*.blocked.example" })
        #expect(rule.names + kid.filter { $0.names == 0 && $0.domain.hasSuffix(".blocked.example") }.count == 12)
        #expect(rule.client == "192.168.1.20" && rule.count == rule.names && rule.matched == "blocked.example")
        let reason = try #require(kid.first { $0.domain == "*" })
        #expect(reason.reason == "downtime" && reason.names == 2)
        // The history holds the same folded rows, for `hits`.
        let history = try store.recentHits(since: 0, profile: "kid")
        #expect(history.first { $0.domain == "*.blocked.example" }?.names == rule.names)

        // Later in the same minute a name already seen keeps its row; a new one folds.
        let seen = try #require(kid.first { $0.names == 0 && $0.domain.hasPrefix("x") }).domain
        aggregator.record(hit(seen, at: 150))
        aggregator.record(hit("new.blocked.example", at: 150))
        bounded = try flusher.flush(activity: [:], versions: [:], now: 150)
        #expect(bounded.namesFolded == 1)
        #expect(try store.recentHits(since: 150, profile: "kid").map(\.domain).sorted() == ["*.blocked.example", seen])
        // The next minute has room again.
        aggregator.record(hit("next.blocked.example", at: 185))
        #expect(try flusher.flush(activity: [:], versions: [:], now: 185).namesFolded == 0)
        #expect(try store.recentHits(since: 185, profile: "kid").map(\.domain) == ["next.blocked.example"])
    }

    @Test func aFoldedEventCarriesItsNamesInTheReport() throws {
        let events = [
            ReportPayloads.BlockedEvent(
                domain: "*.blocked.example", matched: "blocked.example", reason: "blocked_domain:blocked.example",
                category: nil, client: "192.168.1.20", source: "dns", count: 40, firstSeen: 0, lastSeen: 60,
                names: 31),
            ReportPayloads.BlockedEvent(
                domain: "x.blocked.example", matched: "blocked.example", reason: "blocked_domain:blocked.example",
                category: nil, client: "192.168.1.20", source: "dns", count: 1, firstSeen: 0, lastSeen: 0),
        ]
        let body = ReportPayloads.blockedAttempt(
            batchID: "b", version: 1, windowStart: 0, windowEnd: 60, events: events, merged: 12, at: 60)
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains(#""merged_events":12"#))
        #expect(text.contains(#""count":40,"#) && text.contains(#""names":31"#))
        #expect(text.components(separatedBy: #""names":"#).count == 2)
    }
}
