import Glibc
import SystemIO
import TestSupport

@testable import Store

/// A fixed "now" for tests (2026-03-01T00:00:00Z); nothing in the store reads a clock.
let testNow: Int64 = 1_772_323_200

/// A fresh state directory and a store opened on it. The directory goes with the value.
struct StoreFixture {
    let scratch: ScratchDirectory
    let store: Store
    var directory: String { scratch.path }
    var databasePath: String { scratch.path + "/" + Store.fileName }

    init(now: Int64 = testNow) throws {
        scratch = try ScratchDirectory("phosra-gate-store")
        store = try Store.open(directory: scratch.path, now: now)
    }

    /// Opens another store on the same directory (after `store.close()`, a "restart").
    func reopen(now: Int64 = testNow) throws -> Store { try Store.open(directory: directory, now: now) }
}

/// A hit with defaults for everything a test does not care about.
func hit(
    _ domain: String = "reddit.com", profile: String = "alice", reason: String = "blocked_domain:reddit.com",
    client: String = "192.168.1.20", source: String = "dns", count: Int = 1, matched: String? = "reddit.com",
    category: String? = nil, at firstSeen: Int64 = testNow, until lastSeen: Int64? = nil,
    policyVersion: Int = 1
) -> HitRow {
    HitRow(
        profile: profile, domain: domain, matched: matched, reason: reason, category: category, client: client,
        source: source, count: count, firstSeen: firstSeen, lastSeen: lastSeen ?? firstSeen,
        policyVersion: policyVersion)
}

/// Raw file helpers for damaging databases on purpose.
enum RawFile {
    static func write(_ path: String, _ bytes: [UInt8]) throws { try Files.writeAtomically(path, bytes) }
    static func read(_ path: String) throws -> [UInt8] { try Files.read(path) }
    static func exists(_ path: String) -> Bool { Files.exists(path) }
    static func size(_ path: String) -> Int64? { try? Files.status(path).size }
    static func truncate(_ path: String, to size: Int) { _ = Glibc.truncate(path, off_t(size)) }
    static func makeDirectory(_ path: String) { mkdir(path, 0o755) }
    static func list(_ directory: String) -> [String] { (try? Files.list(directory)) ?? [] }
}

extension Store {
    /// Runs raw SQL for a test (inspection, or setting up a state the API cannot reach).
    func testRows<T: Sendable>(_ sql: String, _ make: @escaping (Row) -> T) throws -> [T] {
        try withDatabase { database throws(StoreError) in try database.rows(sql, make: make) }
    }
    func testInteger(_ sql: String) throws -> Int {
        try withDatabase { database throws(StoreError) in try database.integer(sql) }
    }
    func testExecute(_ sql: String) throws {
        try withDatabase { database throws(StoreError) in try database.execute(sql) }
    }
}
