import Config
import Store
import TestSupport
import Testing

@testable import Gateway

/// What the daemon makes of its configuration and its state for the notifications: the
/// page's address in a tap, and the gateway's trouble.
@Suite struct NotifySetupTests {
    func parse(_ text: String) throws(ConfigError) -> Settings {
        try ConfigFile.parse(text, path: "x.conf", schema: Key.schema)
    }

    @Test func theKeysParseAndABadOneSaysWhere() throws {
        let settings = try parse("notify_url = https://ntfy.sh/family-a1b2\nnotify_events = ask, trouble")
        #expect(settings[Key.notifyURL]?.description == "https://ntfy.sh/family-a1b2")
        #expect(settings[Key.notifyFormat] == .ntfy)
        #expect(settings[Key.notifyEvents] == [.ask, .trouble])
        #expect(try parse("")[Key.notifyURL] == nil)
        #expect(try parse("")[Key.notifyEvents].count == 6)
        #expect(throws: ConfigError.self) { try parse("notify_url = ftp://x") }
        #expect(throws: ConfigError.self) { try parse("notify_events = ask, everything") }
        #expect(throws: ConfigError.self) { try parse("notify_format = xml") }
        #expect(try parse("")[Key.summaryTime] == 20 * 60)
        #expect(try parse("summary_time = 07:30")[Key.summaryTime] == 7 * 60 + 30)
        for bad in ["7:30", "24:00", "12:60", "noon", "12:3"] {
            #expect(throws: ConfigError.self) { try parse("summary_time = \(bad)") }
        }
    }

    @Test func aTapGoesToThePagesNameElseItsAddress() throws {
        #expect(
            NotifySetup.pageURL(try parse("web_listen = 192.168.1.1:8443\nweb_names = gate.lan"))
                == "https://gate.lan:8443/")
        #expect(NotifySetup.pageURL(try parse("web_listen = 192.168.1.1:8443")) == "https://192.168.1.1:8443/")
        #expect(NotifySetup.pageURL(try parse("web_listen = [fd00::1]:443")) == "https://[fd00::1]/")
        #expect(NotifySetup.pageURL(try parse("web_listen =")) == nil)
    }

    @Test func aSyncFailingForAnHourIsTroubleOncePerOutage() throws {
        let scratch = try ScratchDirectory("pg-notify-trouble")
        let now: Int64 = 1_772_323_200
        let store = try Store.open(directory: scratch.path, now: now)
        try store.saveSyncState(
            SyncState(profile: "alice", lastSuccessAt: now - 3_700, lastError: "HTTP 503", lastErrorAt: now - 10))
        try store.saveSyncState(
            SyncState(profile: "bob", lastSuccessAt: now - 1_800, lastError: "HTTP 503", lastErrorAt: now - 10))
        try store.saveSyncState(SyncState(profile: "carol", lastSuccessAt: now - 7_200))
        let trouble = NotifySetup.trouble(store: store, lists: [], startedAt: now - 86_400, now: now, page: nil)
        #expect(trouble.map(\.id) == ["trouble:sync:alice:\(now - 3_700)"])
        #expect(trouble.first?.message == "alice: HTTP 503. The gateway enforces the last policy it has.")
        // Never synced since a start an hour and more ago: counted from the start.
        try store.saveSyncState(SyncState(profile: "dave", lastError: "connection refused", lastErrorAt: now))
        let since = NotifySetup.trouble(store: store, lists: [], startedAt: now - 3_600, now: now, page: nil)
        #expect(since.map(\.id).contains("trouble:sync:dave:0"))
    }
}
