import TestSupport
import Testing

@testable import Store

/// The page's sessions and password between this store and the shared one
/// (docs/two-gateways.md): a session waits to be written when opened and when used again;
/// a logout waits to end it everywhere, an expiry does not (every gateway finds it
/// expired by itself); sessions read from the shared store open here, their latest use
/// wins, and an ended one goes.
@Suite(.blocking) struct SharedPageTests {
    static func session(_ byte: UInt8, used: Int64 = 1_000) -> WebSessionRow {
        WebSessionRow(
            tokenHash: [UInt8](repeating: byte, count: 32), passwordTag: "tag", csrfToken: "csrf-\(byte)",
            address: "10.0.0.30", createdAt: 1_000, lastUsedAt: used)
    }

    @Test func aSessionWaitsWhenOpenedAndUsedAndALogoutWaitsToEndItEverywhere() throws {
        let store = try StoreFixture().store
        try store.addWebSession(Self.session(1))
        try store.addWebSession(Self.session(2))
        let waiting = try store.unsharedWebSessions()
        #expect(waiting.map(\.csrfToken) == ["csrf-1", "csrf-2"])
        try store.markWebSessionsShared(waiting, ended: [])
        #expect(try store.unsharedWebSessions().isEmpty)

        try store.touchWebSession(tokenHash: Self.session(1).tokenHash, at: 1_100)
        #expect(try store.unsharedWebSessions().map(\.lastUsedAt) == [1_100])
        // Marked as read before a later use: still waiting.
        let stale = try store.unsharedWebSessions()
        try store.touchWebSession(tokenHash: Self.session(1).tokenHash, at: 1_200)
        try store.markWebSessionsShared(stale, ended: [])
        #expect(try store.unsharedWebSessions().map(\.lastUsedAt) == [1_200])

        // Logged out: gone here, waiting to be ended everywhere. Expired: gone here only.
        try store.endWebSession(tokenHash: Self.session(1).tokenHash, at: 1_300)
        try store.removeWebSession(tokenHash: Self.session(2).tokenHash)
        #expect(try store.webSession(tokenHash: Self.session(1).tokenHash) == nil)
        let ended = try store.endedWebSessions()
        #expect(ended.map(\.tokenHash) == [Self.session(1).tokenHash] && ended.map(\.endedAt) == [1_300])
        try store.markWebSessionsShared([], ended: ended.map(\.tokenHash))
        #expect(try store.endedWebSessions().isEmpty)
    }

    @Test func sessionsFromTheSharedStoreOpenHereAndAnEndedOneGoes() throws {
        let store = try StoreFixture().store
        try store.addWebSession(Self.session(1, used: 1_500))
        try store.mergeSharedWebSessions(
            open: [Self.session(1, used: 1_200), Self.session(3, used: 1_400)], ended: [], pulled: 7)
        #expect(try store.webSession(tokenHash: Self.session(1).tokenHash)?.lastUsedAt == 1_500, "the latest use wins")
        #expect(try store.webSession(tokenHash: Self.session(3).tokenHash)?.csrfToken == "csrf-3")
        #expect(try store.unsharedWebSessions().map(\.csrfToken) == ["csrf-1"], "one read here is not written back")
        #expect(try store.sharedPageState().pulled == 7)

        // Logged out here while the shared store still has it open: it stays out.
        try store.endWebSession(tokenHash: Self.session(1).tokenHash, at: 1_600)
        try store.mergeSharedWebSessions(open: [Self.session(1, used: 1_550)], ended: [], pulled: 8)
        #expect(try store.webSession(tokenHash: Self.session(1).tokenHash) == nil)
        try store.markWebSessionsShared([], ended: [Self.session(1).tokenHash])
        try store.addWebSession(Self.session(1, used: 1_500))
        try store.mergeSharedWebSessions(open: [], ended: [Self.session(3).tokenHash], pulled: 9)
        #expect(try store.webSession(tokenHash: Self.session(3).tokenHash) == nil)
        #expect(try store.endedWebSessions().isEmpty, "ended elsewhere: nothing to end again")

        #expect(try store.sharedPageState().password == nil)
        try store.setSharedWebPassword("$scrypt$…")
        #expect(try store.sharedPageState() == (pulled: 9, password: "$scrypt$…"))
        try store.forgetShared()
        #expect(try store.sharedPageState() == (pulled: 0, password: nil))
        #expect(try store.unsharedWebSessions().count == 1)
    }
}
