import Foundation
import Glibc
import Store
import TestSupport
import Testing

@testable import SharedStore

/// Two gateways' SQLite stores kept in step through a real PostgreSQL server: an override
/// set on one is live on the other and removed on both, a device's latest name wins on
/// both, what is made while the server is away waits and goes once, and a gateway hears
/// of another's change by notification.
@Suite(.serialized, .blocking) struct SharedReplicaTests {
    let server: PostgresServer
    let scratch: ScratchDirectory

    init() throws {
        try #require(PostgresServer.isInstalled, "postgresql")
        server = try PostgresServer()
        scratch = try ScratchDirectory("pg-shared-replica")
    }

    func gateway(_ id: String) throws -> (store: Store, shared: SharedStore) {
        let store = try Store.open(directory: scratch.path(id), now: 1_000)
        let shared = try SharedStore.open(
            url: server.url, passwordFile: try server.passwordFile(), gateway: id, now: 1_000)
        return (store, shared)
    }

    @Test func anOverrideSetOnOneIsLiveOnTheOtherAndRemovedOnBoth() throws {
        let (storeA, a) = try gateway("pi-1")
        let (storeB, b) = try gateway("pi-2")
        let pause = try storeA.addOverride(
            OverrideRow(profile: "mia", kind: "pause", startsAt: 1_000, endsAt: 4_600, setBy: "page 10.0.0.5"))
        #expect(try a.push(from: storeA) == 1)
        #expect(try a.push(from: storeA) == 0)
        #expect(try b.pull(into: storeB).changed)
        let copied = try storeB.liveOverrides(now: 1_001)
        #expect(copied.map(\.kind) == ["pause"])
        #expect(copied.first?.uid == "pi-1:\(pause.id)")
        #expect(copied.first?.endsAt == 4_600 && copied.first?.setBy == "page 10.0.0.5")
        // The gateway that made it reports it to the API; the copy is not news here.
        #expect(try storeB.unreportedOverrides(limit: 10).isEmpty)
        // Its own change read back changes nothing on the first gateway.
        #expect(try a.pull(into: storeA).changed == false)
        #expect(try storeA.liveOverrides(now: 1_001).count == 1)

        // Resumed on the second gateway: ended on both.
        #expect(try storeB.endOverrides(profile: "mia", kind: "pause", now: 1_200, by: "page 10.0.0.6") == 1)
        #expect(try b.push(from: storeB) == 1)
        #expect(try a.pull(into: storeA).changed)
        #expect(try storeA.liveOverrides(now: 1_201).isEmpty)
        #expect(try b.pull(into: storeB).changed == false)
        let rows = try a.connection.execute("SELECT uid, removed_at, removed_by FROM overrides")
        #expect(rows == [["pi-1:\(pause.id)", "1200", "page 10.0.0.6"]])
    }

    @Test func aDevicesLatestChangeWinsOnBoth() throws {
        let (storeA, a) = try gateway("pi-1")
        let (storeB, b) = try gateway("pi-2")
        let mac = "aa:bb:cc:dd:ee:01"
        try storeA.saveDevice(mac: mac, name: "Mia's phone", profile: "mia", now: 10, by: "page a")
        // Named on the second before it heard of the first: the later name stays.
        try storeB.saveDevice(mac: mac, name: "<b>Phone</b>", profile: nil, now: 12, by: "page b")
        #expect(try a.push(from: storeA) == 1)
        #expect(try b.push(from: storeB) == 1)
        _ = try a.pull(into: storeA)
        _ = try b.pull(into: storeB)
        for store in [storeA, storeB] {
            let device = try #require(try store.devices().first)
            #expect(device.name == "<b>Phone</b>" && device.profile == nil && device.changedAt == 12)
        }
        // Older news from the first gateway loses to what the shared store holds, and the
        // first takes the shared one.
        try storeA.saveDevice(mac: mac, name: "old", profile: "mia", now: 11, by: "page a")
        #expect(try a.push(from: storeA) == 1)
        #expect(try storeA.devices().first?.name == "<b>Phone</b>")
        #expect(try storeA.unsharedCount() == 0)
        // The same second on both: the same one wins on both (the higher gateway id).
        try storeA.saveDevice(mac: mac, name: "from a", profile: "mia", now: 20, by: "page a")
        try storeB.saveDevice(mac: mac, name: "from b", profile: "mia", now: 20, by: "page b")
        _ = try a.push(from: storeA)
        _ = try b.push(from: storeB)
        _ = try a.pull(into: storeA)
        _ = try b.pull(into: storeB)
        #expect(try storeA.devices() == storeB.devices())
        #expect(try storeA.devices().first?.name == "from b")
    }

    @Test func whatIsMadeWhileTheServerIsAwayWaitsAndGoesOnce() throws {
        let (storeA, a) = try gateway("pi-1")
        let (storeB, _) = try gateway("pi-2")
        server.stop()
        _ = try storeA.addOverride(
            OverrideRow(profile: "mia", kind: "extension", minutes: 30, startsAt: 1_000, endsAt: 2_800, setBy: "page"))
        try storeA.saveDevice(mac: "aa:bb:cc:dd:ee:02", name: "Tablet", profile: "leo", now: 1_000, by: "page")
        #expect(throws: SharedStoreError.self) { try a.push(from: storeA) }
        #expect(try storeA.unsharedCount() == 2)
        try server.start()
        let again = try SharedStore.open(
            url: server.url, passwordFile: try server.passwordFile(), gateway: "pi-1", now: 1_100)
        #expect(try again.push(from: storeA) == 2)
        #expect(try again.push(from: storeA) == 0)
        #expect(try storeA.unsharedCount() == 0)
        let b = try SharedStore.open(
            url: server.url, passwordFile: try server.passwordFile(), gateway: "pi-2", now: 1_100)
        #expect(try b.pull(into: storeB).changed)
        #expect(try storeB.liveOverrides(now: 1_100).map(\.minutes) == [30])
        #expect(try storeB.devices().map(\.name) == ["Tablet"])
        #expect(try again.connection.execute("SELECT count(*) FROM overrides") == [["1"]])
    }

    @Test func aGatewayHearsOfAnothersChange() throws {
        let (storeA, a) = try gateway("pi-1")
        let (_, b) = try gateway("pi-2")
        try a.listen()
        try b.listen()
        _ = try storeA.addOverride(
            OverrideRow(profile: "mia", kind: "pause", startsAt: 1_000, endsAt: nil, setBy: "page"))
        try a.push(from: storeA)
        var entry = pollfd(fd: b.socket, events: Int16(POLLIN), revents: 0)
        #expect(poll(&entry, 1, 2_000) == 1)
        #expect(try b.othersChanged())
        // A gateway's own change is no news to it (libpq read its notification with the
        // commit's answer, so nothing is left on the socket).
        #expect(try a.othersChanged() == false)
    }

    /// A request asked on one gateway waits on both; answered on the other, it is
    /// answered on both, with the override the answer made; answered on both at once,
    /// the first answer written stands on both.
    @Test func aRequestAnsweredOnOneIsAnsweredOnBoth() throws {
        let (storeA, a) = try gateway("pi-1")
        let (storeB, b) = try gateway("pi-2")
        func ask(_ store: Store, note: String, at: Int64) throws -> RequestRow {
            try store.addRequest(
                RequestRow(
                    profile: "mia", device: "aa:bb:cc:dd:ee:01", address: "10.0.0.9", kind: "site",
                    target: "youtube.com", note: note, askedAt: at, expiresAt: 90_000)
            ).get()
        }
        let asked = try ask(storeA, note: "<b>homework</b>", at: 1_000)
        try a.push(from: storeA)
        #expect(try b.pull(into: storeB).changed)
        let waiting = try #require(try storeB.waitingRequests(now: 1_001).first)
        #expect(waiting.uid == "pi-1:\(asked.id)" && waiting.note == "<b>homework</b>")

        // Allowed for 15 minutes on the second gateway: an exception and the answer.
        let exception = try storeB.addOverride(
            OverrideRow(
                profile: "mia", kind: "exception", target: "youtube.com", startsAt: 1_100, endsAt: 2_000,
                setBy: "page b"))
        let answered = try storeB.answerRequest(
            id: waiting.id, answer: "allow", minutes: 15, overrideID: exception.id, now: 1_100, by: "page b")
        #expect(answered?.answer == "allow")
        try b.push(from: storeB)
        #expect(try a.pull(into: storeA).changed)
        let mine = try #require(try storeA.request(id: asked.id))
        #expect(mine.answer == "allow" && mine.minutes == 15 && mine.answeredBy == "page b")
        let copied = try #require(try storeA.liveOverrides(now: 1_101).first { $0.kind == "exception" })
        #expect(mine.overrideID == copied.id)
        #expect(try storeA.waitingRequests(now: 1_101).isEmpty)

        // Answered on both before either heard of the other: the first written stands.
        let second = try ask(storeA, note: "again", at: 1_200)
        try a.push(from: storeA)
        _ = try b.pull(into: storeB)
        let copy = try #require(try storeB.waitingRequests(now: 1_201).first)
        _ = try storeB.answerRequest(id: copy.id, answer: "deny", minutes: nil, overrideID: nil, now: 1_210, by: "b")
        _ = try storeA.answerRequest(
            id: second.id, answer: "allow", minutes: 60, overrideID: nil, now: 1_220, by: "a")
        try b.push(from: storeB)
        try a.push(from: storeA)
        _ = try a.pull(into: storeA)
        _ = try b.pull(into: storeB)
        #expect(try storeA.request(id: second.id)?.answer == "deny")
        #expect(try storeB.request(id: copy.id)?.answer == "deny")
        #expect(try storeA.unsharedCount() == 0 && storeB.unsharedCount() == 0)
    }

    /// A gateway that meets another database (a new one, or one restored from a backup)
    /// writes everything again there rather than wait for changes numbered past its mark.
    @Test func aNewDatabaseGetsEverythingAgain() throws {
        let (storeA, a) = try gateway("pi-1")
        _ = try storeA.addOverride(
            OverrideRow(profile: "mia", kind: "pause", startsAt: 1_000, endsAt: nil, setBy: "page"))
        try storeA.saveDevice(mac: "aa:bb:cc:dd:ee:03", name: "Console", profile: nil, now: 1_000, by: "page")
        #expect(try a.adopt(storeA) == false)
        try a.push(from: storeA)
        _ = try a.pull(into: storeA)
        #expect(try a.adopt(storeA) == false)

        let other = try PostgresServer()
        let fresh = try SharedStore.open(
            url: other.url, passwordFile: try other.passwordFile(), gateway: "pi-1", now: 2_000)
        #expect(try fresh.adopt(storeA))
        #expect(try storeA.unsharedCount() == 2)
        #expect(try fresh.push(from: storeA) == 2)
        #expect(try fresh.connection.execute("SELECT count(*) FROM overrides") == [["1"]])
        #expect(try fresh.connection.execute("SELECT name FROM devices") == [["Console"]])
        _ = try fresh.pull(into: storeA)
        #expect(try fresh.adopt(storeA) == false)
        #expect(try storeA.liveOverrides(now: 2_001).count == 1)
    }

    /// Each gateway's history and hourly counts reach the other's page: whole counts, so a
    /// row written again as it grows replaces what was read; the same name, bucket and
    /// client on both is one row; a day larger than a batch arrives over several rounds,
    /// nothing doubled.
    @Test func eachGatewaysDayIsOnTheOthersPage() throws {
        let (storeA, a) = try gateway("pi-1")
        let (storeB, b) = try gateway("pi-2")
        func blocked(_ domain: String, count: Int, at: Int64) -> HitRow {
            HitRow(
                profile: "mia", domain: domain, matched: domain, reason: "blocked_domain:\(domain)", category: nil,
                client: "10.0.0.20", source: "dns", count: count, firstSeen: at, lastSeen: at, policyVersion: 1)
        }
        try storeA.recordHistory([blocked("reddit.com", count: 2, at: 1_000)])
        try storeA.addActivity(profile: "mia", hourStart: 0, queries: 10, blocksByReason: ["blocked_domain": 2])
        try storeB.recordHistory([blocked("reddit.com", count: 1, at: 1_010)])
        try storeB.addActivity(profile: "mia", hourStart: 0, queries: 4, blocksByReason: ["blocked_domain": 1])
        #expect(try a.pushHistory(from: storeA) == (2, false))
        #expect(try b.pushHistory(from: storeB) == (2, false))
        #expect(try a.pushHistory(from: storeA) == (0, false))
        #expect(try a.pullHistory(into: storeA).read == 3)
        #expect(try b.pullHistory(into: storeB).read == 3)
        for store in [storeA, storeB] {
            let rows = try store.history(profile: "mia", before: .max, limit: 10)
            #expect(rows.map { "\($0.domain) \($0.count)" } == ["reddit.com 3"])
            #expect(try store.dayCounts(profile: "mia", since: 0) == (queries: 14, blocks: 3))
        }

        // Counted again on the first: written again whole, read on the second in place of the old.
        try storeA.recordHistory([blocked("reddit.com", count: 5, at: 1_020)])
        try a.pushHistory(from: storeA)
        _ = try b.pullHistory(into: storeB)
        #expect(try storeB.history(profile: "mia", before: .max, limit: 10).map(\.count) == [8])
        #expect(try b.pullHistory(into: storeB) == (0, false))

        // More rows than a batch: several rounds each way, every row once.
        let many = SharedStore.historyBatch + 500
        try storeA.recordHistory((0..<many).map { blocked("site\($0).example", count: 1, at: 2_000 + Int64($0)) })
        var rounds = 0
        while try a.pushHistory(from: storeA).more { rounds += 1 }
        #expect(rounds == 1)
        rounds = 0
        while try b.pullHistory(into: storeB).more { rounds += 1 }
        #expect(rounds == 1)
        let rows = try storeB.history(profile: "mia", before: .max, limit: many + 10)
        #expect(rows.count == many + 1 && rows.reduce(0) { $0 + $1.count } == many + 8)
        #expect(try a.connection.execute("SELECT count(*) FROM hit_history") == [["\(many + 2)"]])

        // A device seen by the first only is on the second's list; seen by both, it is one.
        func seen(queries: Int, at: Int64) -> ClientSighting {
            ClientSighting(
                profile: "mia", client: "10.0.0.20", address: "10.0.0.20", mac: nil, firstSeen: at, lastSeen: at,
                queries: queries)
        }
        try storeA.recordSightings([seen(queries: 3, at: 1_000)])
        try a.pushHistory(from: storeA)
        _ = try b.pullHistory(into: storeB)
        #expect(try storeB.sightings(since: 0).map(\.queries) == [3])
        try storeB.recordSightings([seen(queries: 2, at: 1_100)])
        try b.pushHistory(from: storeB)
        _ = try a.pullHistory(into: storeA)
        #expect(try storeA.sightings(since: 0).map(\.queries) == [5])

        // Pruned by age in the shared store as in each gateway's own.
        try a.pruneHistory(before: 1_500)
        #expect(try a.connection.execute("SELECT count(*) FROM hit_history") == [["\(many)"]])
        #expect(try a.connection.execute("SELECT count(*) FROM activity") == [["0"]])
        #expect(try a.connection.execute("SELECT count(*) FROM sightings") == [["0"]])
    }

    /// A session opened on one gateway's page opens the other's, its use on either keeps it
    /// alive on both, a logout on either ends it on both; the page's password set on one is
    /// the other's, the later of two winning.
    @Test func thePagesSessionsAndPasswordAreOneAcrossGateways() throws {
        let (storeA, a) = try gateway("pi-1")
        let (storeB, b) = try gateway("pi-2")
        let session = WebSessionRow(
            tokenHash: Array(repeating: 0xab, count: 32), passwordTag: "t1", csrfToken: "c1", address: "10.0.0.30",
            createdAt: 1_000, lastUsedAt: 1_000)
        try storeA.addWebSession(session)
        let first = SharedStore.PagePassword(hash: "$scrypt$one", changedAt: 1_000)
        #expect(try a.pushPage(from: storeA, password: first) == nil)
        #expect(try a.pushPage(from: storeA, password: nil) == nil)
        #expect(try b.pullPage(into: storeB) == first)
        #expect(try storeB.webSession(tokenHash: session.tokenHash) == session)
        #expect(try storeB.sharedPageState().password == "$scrypt$one")
        #expect(try b.pullPage(into: storeB) == nil)

        // Used on the second gateway: the first sees the use.
        try storeB.touchWebSession(tokenHash: session.tokenHash, at: 1_500)
        try b.pushPage(from: storeB, password: nil)
        _ = try a.pullPage(into: storeA)
        #expect(try storeA.webSession(tokenHash: session.tokenHash)?.lastUsedAt == 1_500)

        // A password set earlier on the second loses to the first's; a later one wins.
        let older = SharedStore.PagePassword(hash: "$scrypt$old", changedAt: 900)
        #expect(try b.pushPage(from: storeB, password: older) == first)
        #expect(try storeB.sharedPageState().password == "$scrypt$one")
        let later = SharedStore.PagePassword(hash: "$scrypt$two", changedAt: 2_000)
        #expect(try b.pushPage(from: storeB, password: later) == nil)
        #expect(try a.pullPage(into: storeA) == later)

        // Logged out on the first: ended on the second.
        try storeA.endWebSession(tokenHash: session.tokenHash, at: 2_100)
        try a.pushPage(from: storeA, password: nil)
        _ = try b.pullPage(into: storeB)
        #expect(try storeB.webSession(tokenHash: session.tokenHash) == nil)
        #expect(try storeA.endedWebSessions().isEmpty && storeB.endedWebSessions().isEmpty)
        let rows = try a.connection.execute("SELECT token_hash, ended_at FROM web_sessions")
        #expect(rows == [[String(repeating: "ab", count: 32), "2100"]], "the hash, never a token")
    }

    @Test func hexRoundTrips() {
        let bytes: [UInt8] = [0, 1, 0x7f, 0x80, 0xfe, 0xff]
        #expect(SharedStore.hex(bytes) == "00017f80feff")
        #expect(SharedStore.bytes("00017f80feff") == bytes)
        #expect(SharedStore.bytes("0g") == nil && SharedStore.bytes("abc") == nil)
    }
}
