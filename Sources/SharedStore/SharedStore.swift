import SystemIO

/// The state two or more gateways of one family share on PostgreSQL (`shared_store`,
/// docs/two-gateways.md). This first part: the connection (a `postgresql://` URL, the
/// password from a file, never from the URL's text in a message), the numbered schema
/// applied once under an advisory lock, and app minutes as facts that count once
/// whichever gateway saw them.
///
/// Threading: one connection, used by one thread at a time.
public final class SharedStore {
    let connection: PGConnection
    /// This gateway's id among those that share the database.
    public let gateway: String

    /// Connects, applies the pending migrations and says this gateway is here. A password
    /// file's first line is the password (`shared_store_password_file`).
    public static func open(
        url: String, passwordFile: String? = nil, gateway: String, now: Int64
    ) throws(SharedStoreError) -> SharedStore {
        let connection = try PGConnection(url: url, password: try password(file: passwordFile))
        try SharedMigrations.apply(connection)
        try connection.execute(
            """
            INSERT INTO gateways (id, started_at, seen_at) VALUES ($1, $2, $2)
            ON CONFLICT (id) DO UPDATE SET started_at = excluded.started_at, seen_at = excluded.seen_at
            """, [gateway, "\(now)"])
        return SharedStore(connection: connection, gateway: gateway)
    }

    /// The first line of `shared_store_password_file`, when one is given.
    static func password(file: String?) throws(SharedStoreError) -> String? {
        guard let file else { return nil }
        do {
            let text = String(decoding: try Files.read(file, limit: 4096), as: UTF8.self)
            return String(text.split(whereSeparator: \.isNewline).first ?? "")
        } catch {
            throw .passwordFile(path: file, reason: "\(error)")
        }
    }

    private init(connection: PGConnection, gateway: String) {
        self.connection = connection
        self.gateway = gateway
    }

    /// The schema version of the database.
    public func schemaVersion() throws(SharedStoreError) -> Int { try SharedMigrations.version(connection) }

    /// The schema version this build writes and reads.
    public static var supportedSchemaVersion: Int { SharedMigrations.latest }

    /// One minute of use: `minute` is the minute of the day's slot (`MinuteSet.slot`).
    public struct MinuteFact: Sendable, Equatable, Hashable {
        public var profile: String
        public var service: String
        public var day: Int
        public var minute: Int

        public init(profile: String, service: String, day: Int, minute: Int) {
            self.profile = profile
            self.service = service
            self.day = day
            self.minute = minute
        }
    }

    /// Records minutes of use; a minute another gateway (or this one) recorded already is
    /// not counted again. Returns how many were new. One statement, one transaction.
    @discardableResult
    public func record(_ facts: [MinuteFact]) throws(SharedStoreError) -> Int {
        guard !facts.isEmpty else { return 0 }
        var new = 0
        try transaction { () throws(SharedStoreError) in
            try connection.execute("SELECT pg_advisory_xact_lock($1)", [Self.changesLockKey])
            new = try insert(facts)
            try connection.execute("SELECT pg_notify($1, $2)", [Self.channel, gateway])
        }
        return new
    }

    /// The facts' rows, within the caller's transaction (which holds the changes lock),
    /// in statements of at most 1000 facts; returns how many were new.
    func insert(_ facts: [MinuteFact]) throws(SharedStoreError) -> Int {
        var new = 0
        var start = 0
        while start < facts.count {
            let chunk = facts[start..<min(start + 1000, facts.count)]
            var sql = "INSERT INTO usage_minutes (profile, service, day, minute, gateway, seq) VALUES "
            var parameters: [String?] = [gateway]
            for (index, fact) in chunk.enumerated() {
                let base = 2 + index * 4
                sql +=
                    (index == 0 ? "" : ", ")
                    + "($\(base), $\(base + 1), $\(base + 2), $\(base + 3), $1, nextval('changes'))"
                parameters += [fact.profile, fact.service, "\(fact.day)", "\(fact.minute)"]
            }
            sql += " ON CONFLICT DO NOTHING RETURNING 1"
            new += try connection.execute(sql, parameters).count
            start += chunk.count
        }
        return new
    }

    /// Every minute of `day` and later, whichever gateway counted it: what a gateway that
    /// (re)connects counts from.
    public func facts(sinceDay day: Int) throws(SharedStoreError) -> [MinuteFact] {
        try factRows("day >= $1", ["\(day)"]).map(\.0)
    }

    func factRows(_ condition: String, _ parameters: [String?]) throws(SharedStoreError) -> [(MinuteFact, Int64)] {
        var out: [(MinuteFact, Int64)] = []
        for row in try connection.execute(
            "SELECT profile, service, day, minute, seq FROM usage_minutes WHERE \(condition) ORDER BY seq", parameters)
        {
            guard let profile = row[0], let service = row[1], let day = row[2].flatMap({ Int($0) }),
                let minute = row[3].flatMap({ Int($0) }), let seq = row[4].flatMap({ Int64($0) })
            else { throw .malformed("usage_minutes", row.first.flatMap { $0 } ?? "?") }
            out.append((MinuteFact(profile: profile, service: service, day: day, minute: minute), seq))
        }
        return out
    }

    /// Minutes of use of `profile` on `day`, by service, whichever gateway saw them.
    public func minutes(profile: String, day: Int) throws(SharedStoreError) -> [String: Int] {
        var out: [String: Int] = [:]
        for row in try connection.execute(
            "SELECT service, count(*) FROM usage_minutes WHERE profile = $1 AND day = $2 GROUP BY service",
            [profile, "\(day)"])
        {
            guard let service = row[0], let count = row[1].flatMap({ Int($0) }) else { continue }
            out[service] = count
        }
        return out
    }

    public func close() { connection.close() }
}
