import Foundation
import SystemIO
import TestSupport
import Testing

@testable import SharedStore

/// The shared store against a real PostgreSQL server of the test's own: the password from
/// a file and never in a message, the schema made once when two gateways start at once, a
/// minute seen by two gateways counted once, and a server that is gone a clear error.
@Suite(.serialized, .blocking) struct SharedStoreTests {
    let server: PostgresServer

    init() throws {
        try #require(PostgresServer.isInstalled, "postgresql")
        server = try PostgresServer()
    }

    @Test func thePasswordComesFromAFileAndAWrongOneIsNeverShown() throws {
        let store = try SharedStore.open(
            url: server.url, passwordFile: try server.passwordFile(), gateway: "pi-1", now: 1_000)
        #expect(try store.schemaVersion() == SharedStore.supportedSchemaVersion)
        let scratch = try ScratchDirectory("pg-shared-wrong")
        let wrong = try scratch.write("wrong", "not-the-password\n")
        do {
            _ = try SharedStore.open(url: server.url, passwordFile: wrong, gateway: "pi-2", now: 1_000)
            Issue.record("a wrong password connected")
        } catch {
            #expect(error.description.contains("password authentication failed"), "\(error)")
            #expect(!error.description.contains("not-the-password"))
        }
        #expect(throws: SharedStoreError.self) {
            try SharedStore.open(url: server.url, passwordFile: scratch.path("missing"), gateway: "x", now: 0)
        }
        #expect(throws: SharedStoreError.badURL("\"127.0.0.1:5432/x\" is not a postgresql:// URL")) {
            try SharedStore.open(url: "mysql://u:secret@127.0.0.1:5432/x", gateway: "x", now: 0)
        }
    }

    @Test func twoGatewaysStartingAtOnceMakeTheSchemaOnce() throws {
        let passwordFile = try server.passwordFile()
        let url = server.url
        let outcomes = Locked<[String]>([])
        // Four gateways at once, each its own connection and thread.
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            do {
                let store = try SharedStore.open(
                    url: url, passwordFile: passwordFile, gateway: "pi-\(index + 1)", now: 5)
                let version = try store.schemaVersion()
                outcomes.update { $0.append("v\(version)") }
            } catch {
                outcomes.update { $0.append("\(error)") }
            }
        }
        #expect(
            outcomes.value == Array(repeating: "v\(SharedStore.supportedSchemaVersion)", count: 4), "\(outcomes.value)")
        let store = try SharedStore.open(url: url, passwordFile: passwordFile, gateway: "pi-1", now: 6)
        let steps = try store.connection.execute("SELECT count(*) FROM schema_version")
        #expect(steps.first?.first == "\(SharedStore.supportedSchemaVersion)")
        let gateways = try store.connection.execute("SELECT id FROM gateways ORDER BY id").compactMap {
            $0.first ?? nil
        }
        #expect(gateways == ["pi-1", "pi-2", "pi-3", "pi-4"])
    }

    @Test func aMinuteSeenByTwoGatewaysCountsOnce() throws {
        let passwordFile = try server.passwordFile()
        let first = try SharedStore.open(url: server.url, passwordFile: passwordFile, gateway: "pi-1", now: 1)
        let second = try SharedStore.open(url: server.url, passwordFile: passwordFile, gateway: "pi-2", now: 1)
        func minute(_ slot: Int, _ service: String = "tiktok") -> SharedStore.MinuteFact {
            .init(profile: "mia", service: service, day: 20_794, minute: slot)
        }
        // Three minutes of TikTok; each gateway saw the phone in each of them.
        #expect(try first.record([minute(600), minute(601), minute(602)]) == 3)
        #expect(try second.record([minute(600), minute(601), minute(602), minute(602, "*online")]) == 1)
        #expect(try second.minutes(profile: "mia", day: 20_794) == ["tiktok": 3, "*online": 1])
        #expect(try first.minutes(profile: "mia", day: 20_795).isEmpty)
        // A value that would be SQL stays a value.
        #expect(
            try first.record([.init(profile: "x'); DROP TABLE usage_minutes; --", service: "s", day: 1, minute: 1)])
                == 1)
        #expect(try first.minutes(profile: "mia", day: 20_794)["tiktok"] == 3)
    }

    /// An event two gateways find is claimed by the first: it sends, the other does not;
    /// claimed again (a later flush), it stays the first's; with the server away, the
    /// claim is unknown and the event is sent anyway.
    @Test func theFirstGatewayToClaimAnEventSendsIt() throws {
        let passwordFile = try server.passwordFile()
        _ = try SharedStore.open(url: server.url, passwordFile: passwordFile, gateway: "pi-1", now: 1)
        let first = NoticeClaims(url: server.url, passwordFile: passwordFile, gateway: "pi-1", clock: SystemClock())
        let second = NoticeClaims(url: server.url, passwordFile: passwordFile, gateway: "pi-2", clock: SystemClock())
        defer {
            first.close()
            second.close()
        }
        #expect(first.claim("device:10.0.0.20", now: 100) == .mine)
        #expect(second.claim("device:10.0.0.20", now: 101) == .taken(by: "pi-1"))
        #expect(first.claim("device:10.0.0.20", now: 102) == .mine)
        #expect(second.claim("budget:mia:tiktok:20794", now: 103) == .mine)
        server.stop()
        if case .unknown = second.claim("device:10.0.0.21", now: 104) {} else { Issue.record("not unknown") }
        try server.start()
    }

    @Test func aServerThatIsGoneIsAClearErrorAndBackIsUsableAgain() throws {
        let passwordFile = try server.passwordFile()
        let store = try SharedStore.open(url: server.url, passwordFile: passwordFile, gateway: "pi-1", now: 1)
        server.stop()
        #expect {
            try store.record([.init(profile: "mia", service: "tiktok", day: 1, minute: 1)])
        } throws: { error in
            guard case .lost = error as? SharedStoreError else { return false }
            return true
        }
        #expect(throws: SharedStoreError.self) {
            try SharedStore.open(url: server.url, passwordFile: passwordFile, gateway: "pi-1", now: 2)
        }
        try server.start()
        let again = try SharedStore.open(url: server.url, passwordFile: passwordFile, gateway: "pi-1", now: 3)
        #expect(try again.record([.init(profile: "mia", service: "tiktok", day: 1, minute: 1)]) == 1)
    }
}

/// The suite's process holds many descriptors a spawned server inherits (other tests'
/// sockets): the server starts all the same.
@Suite(.serialized, .blocking) struct PostgresServerTests {
    @Test func aServerStartsBesideAThousandInheritedDescriptors() throws {
        try #require(PostgresServer.isInstalled, "postgresql")
        let held = (0..<1000).map { _ in open("/dev/null", O_RDONLY) }
        defer { for descriptor in held where descriptor >= 0 { close(descriptor) } }
        #expect(held.allSatisfy { $0 >= 0 })
        let server = try PostgresServer()
        let store = try SharedStore.open(url: server.url, passwordFile: try server.passwordFile(), gateway: "a", now: 1)
        #expect(try store.schemaVersion() == SharedStore.supportedSchemaVersion)
    }
}

/// A value behind a lock, for the threads of one test.
final class Locked<Value>: @unchecked Sendable {
    private var stored: Value
    private let lock = NSLock()
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func update(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}
