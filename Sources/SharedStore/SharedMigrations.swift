/// The shared schema as numbered steps (docs/two-gateways.md), applied in order, each in
/// its own transaction, under an advisory lock: two gateways that start at once apply each
/// step once, the second waiting for the first.
enum SharedMigrations {
    struct Step {
        let version: Int
        let sql: String
    }

    /// The lock's key: "phos" in ASCII, the same for every gateway of the database.
    static let lockKey = "1886892915"

    static let all: [Step] = [
        Step(
            version: 1,
            sql: """
                -- Minutes of use as facts (child, app, day, minute): a phone that asks both
                -- gateways in the same minute writes the same fact twice, and it counts once.
                CREATE TABLE usage_minutes (
                    profile TEXT NOT NULL,
                    service TEXT NOT NULL,
                    day     INTEGER NOT NULL,
                    minute  SMALLINT NOT NULL CHECK (minute >= 0 AND minute < 1500),
                    gateway TEXT NOT NULL,
                    PRIMARY KEY (profile, service, day, minute)
                );
                -- The gateways that share this database, and when each was last heard of.
                CREATE TABLE gateways (
                    id         TEXT PRIMARY KEY,
                    started_at BIGINT NOT NULL,
                    seen_at    BIGINT NOT NULL
                );
                """),
        Step(
            version: 2,
            sql: """
                -- Every change a gateway writes takes the next number of `changes`, under the
                -- changes lock (`SharedStore.changesLockKey`), so numbers are committed in
                -- order and a reader that has seen N has seen everything up to N.
                CREATE SEQUENCE changes;
                -- The parent's overrides (docs/parent-page.md#overrides), known by `uid`
                -- (GATEWAY:ID of the gateway that made it): set once, removed once.
                CREATE TABLE overrides (
                    uid        TEXT PRIMARY KEY,
                    profile    TEXT NOT NULL,
                    kind       TEXT NOT NULL,
                    target     TEXT,
                    minutes    INTEGER,
                    day        INTEGER,
                    starts_at  BIGINT NOT NULL,
                    ends_at    BIGINT,
                    set_by     TEXT NOT NULL,
                    removed_at BIGINT,
                    removed_by TEXT,
                    gateway    TEXT NOT NULL,
                    seq        BIGINT NOT NULL
                );
                CREATE INDEX overrides_seq ON overrides(seq);
                -- Devices as the parent named and assigned them: the latest change wins.
                CREATE TABLE devices (
                    mac        TEXT PRIMARY KEY,
                    name       TEXT,
                    profile    TEXT,
                    changed_at BIGINT NOT NULL,
                    changed_by TEXT NOT NULL,
                    gateway    TEXT NOT NULL,
                    seq        BIGINT NOT NULL
                );
                CREATE INDEX devices_seq ON devices(seq);
                """),
        Step(
            version: 3,
            sql: """
                -- Minutes are read by other gateways as changes are: by their number.
                ALTER TABLE usage_minutes ADD COLUMN seq BIGINT NOT NULL DEFAULT nextval('changes');
                CREATE INDEX usage_minutes_seq ON usage_minutes(seq);
                """),
        Step(
            version: 4,
            sql: """
                -- A child's requests, known by `uid` (GATEWAY:ID of the gateway it was asked
                -- on): asked once, answered once (the first answer written stays).
                CREATE TABLE requests (
                    uid          TEXT PRIMARY KEY,
                    profile      TEXT NOT NULL,
                    device       TEXT NOT NULL,
                    address      TEXT NOT NULL,
                    kind         TEXT NOT NULL,
                    target       TEXT,
                    note         TEXT NOT NULL,
                    asked_at     BIGINT NOT NULL,
                    expires_at   BIGINT NOT NULL,
                    answer       TEXT,
                    minutes      INTEGER,
                    answered_at  BIGINT,
                    answered_by  TEXT,
                    override_uid TEXT,
                    gateway      TEXT NOT NULL,
                    seq          BIGINT NOT NULL
                );
                CREATE INDEX requests_seq ON requests(seq);
                """),
        Step(
            version: 5,
            sql: """
                -- Notifications to the parent that any gateway may find (a new device, a spent
                -- budget): the first gateway to claim one sends it, the others do not.
                CREATE TABLE notices_sent (
                    id         TEXT PRIMARY KEY,
                    gateway    TEXT NOT NULL,
                    claimed_at BIGINT NOT NULL
                );
                """),
        Step(
            version: 6,
            sql: """
                -- Each gateway's hit history and hourly counts, so every page shows the
                -- child's whole day: a row is one gateway's whole count (written again as it
                -- grows; count 0 when it is gone there), read by the others by its number.
                CREATE TABLE hit_history (
                    gateway    TEXT NOT NULL,
                    profile    TEXT NOT NULL,
                    domain     TEXT NOT NULL,
                    reason     TEXT NOT NULL,
                    client     TEXT NOT NULL,
                    source     TEXT NOT NULL,
                    bucket     BIGINT NOT NULL,
                    matched    TEXT,
                    category   TEXT,
                    count      BIGINT NOT NULL,
                    first_seen BIGINT NOT NULL,
                    last_seen  BIGINT NOT NULL,
                    names      BIGINT NOT NULL,
                    seq        BIGINT NOT NULL,
                    PRIMARY KEY (gateway, profile, domain, reason, client, source, bucket)
                );
                CREATE INDEX hit_history_seq ON hit_history(seq);
                CREATE INDEX hit_history_last_seen ON hit_history(last_seen);
                -- kind: `queries` (name empty), `reason`, `category` or `engine`.
                CREATE TABLE activity (
                    gateway    TEXT NOT NULL,
                    profile    TEXT NOT NULL,
                    hour_start BIGINT NOT NULL,
                    kind       TEXT NOT NULL,
                    name       TEXT NOT NULL,
                    count      BIGINT NOT NULL,
                    seq        BIGINT NOT NULL,
                    PRIMARY KEY (gateway, profile, hour_start, kind, name)
                );
                CREATE INDEX activity_seq ON activity(seq);
                CREATE INDEX activity_hour_start ON activity(hour_start);
                """),
        Step(
            version: 7,
            sql: """
                -- Sessions of the parent's page, by the SHA-256 of the cookie's token (hex),
                -- never the token: opened on one gateway, they open the others' pages;
                -- `ended_at` once the parent logged out on any.
                CREATE TABLE web_sessions (
                    token_hash   TEXT PRIMARY KEY,
                    password_tag TEXT NOT NULL,
                    csrf_token   TEXT NOT NULL,
                    address      TEXT NOT NULL,
                    created_at   BIGINT NOT NULL,
                    last_used_at BIGINT NOT NULL,
                    ended_at     BIGINT,
                    gateway      TEXT NOT NULL,
                    seq          BIGINT NOT NULL
                );
                CREATE INDEX web_sessions_seq ON web_sessions(seq);
                -- The page's password as its scrypt hash: set on any gateway, the latest wins.
                CREATE TABLE web_password (
                    id         SMALLINT PRIMARY KEY CHECK (id = 1),
                    hash       TEXT NOT NULL,
                    changed_at BIGINT NOT NULL,
                    gateway    TEXT NOT NULL,
                    seq        BIGINT NOT NULL
                );
                """),
        Step(
            version: 8,
            sql: """
                -- The devices each gateway saw: its whole row, so the Devices page of every
                -- gateway lists a device either saw.
                CREATE TABLE sightings (
                    gateway    TEXT NOT NULL,
                    profile    TEXT NOT NULL,
                    client     TEXT NOT NULL,
                    address    TEXT,
                    mac        TEXT,
                    first_seen BIGINT NOT NULL,
                    last_seen  BIGINT NOT NULL,
                    queries    BIGINT NOT NULL,
                    seq        BIGINT NOT NULL,
                    PRIMARY KEY (gateway, profile, client)
                );
                CREATE INDEX sightings_seq ON sightings(seq);
                CREATE INDEX sightings_last_seen ON sightings(last_seen);
                """),
    ]

    static var latest: Int { all.last?.version ?? 0 }

    /// Brings the database to `latest`; returns the version it found.
    @discardableResult
    static func apply(_ connection: PGConnection) throws(SharedStoreError) -> Int {
        try connection.execute("SELECT pg_advisory_lock($1)", [lockKey])
        defer { _ = try? connection.execute("SELECT pg_advisory_unlock($1)", [lockKey]) }
        try connection.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        let found = try version(connection)
        guard found <= latest else { throw .newerSchema(found: found, supported: latest) }
        for step in all where step.version > found {
            try connection.execute("BEGIN")
            do throws(SharedStoreError) {
                try connection.script(step.sql)
                try connection.execute("INSERT INTO schema_version (version) VALUES ($1)", ["\(step.version)"])
                try connection.execute("COMMIT")
            } catch {
                _ = try? connection.execute("ROLLBACK")
                throw error
            }
        }
        return found
    }

    static func version(_ connection: PGConnection) throws(SharedStoreError) -> Int {
        let rows = try connection.execute("SELECT coalesce(max(version), 0) FROM schema_version")
        guard let text = rows.first?.first ?? nil else { return 0 }
        return Int(text) ?? 0
    }
}
