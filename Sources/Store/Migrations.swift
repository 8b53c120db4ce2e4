import CSQLite

/// One numbered schema step. Its SQL ends by setting `PRAGMA user_version` to its own
/// number, literally (a pragma cannot take a bound parameter), and `Migrations.apply`
/// checks that it did.
struct Migration: Sendable {
    let version: Int
    let sql: String
}

/// The schema, as numbered migrations applied in order on `PRAGMA user_version`.
/// Append only: a shipped migration is never edited, a change is a new number.
enum Migrations {
    static let all: [Migration] = [
        Migration(
            version: 1,
            sql: """
                -- The last good policy per profile, enforced at start before any network call (docs/sync.md#polling).
                CREATE TABLE policies (
                    profile    TEXT PRIMARY KEY NOT NULL,
                    json       BLOB NOT NULL,
                    version    INTEGER NOT NULL,
                    policy_id  TEXT NOT NULL,
                    fetched_at INTEGER NOT NULL
                );
                CREATE TABLE sync_state (
                    profile            TEXT PRIMARY KEY NOT NULL,
                    applied_version    INTEGER NOT NULL,
                    policy_id          TEXT NOT NULL,
                    last_sync_at       INTEGER,
                    last_success_at    INTEGER,
                    last_error         TEXT,
                    last_error_at      INTEGER,
                    unauthorized_since INTEGER,
                    revoked            INTEGER NOT NULL,
                    no_active_policy   INTEGER NOT NULL,
                    acked_version      INTEGER NOT NULL,
                    reported_version   INTEGER NOT NULL,
                    next_full_sync_at  INTEGER
                );
                -- A batch formed from queued rows and not yet acknowledged (docs/sync.md#hits). UNIQUE
                -- (profile): at most one in flight per profile, resent as is until a 202 or 400.
                CREATE TABLE hit_batches (
                    id             TEXT PRIMARY KEY NOT NULL,
                    profile        TEXT NOT NULL UNIQUE,
                    merged_events  INTEGER NOT NULL,
                    policy_version INTEGER NOT NULL,
                    created_at     INTEGER NOT NULL
                );
                -- Hit rows waiting for delivery: batch_id NULL = queued, else part of that batch.
                CREATE TABLE hit_queue (
                    id             INTEGER PRIMARY KEY,
                    profile        TEXT NOT NULL,
                    domain         TEXT NOT NULL,
                    matched        TEXT,
                    reason         TEXT NOT NULL,
                    category       TEXT,
                    client         TEXT NOT NULL,
                    source         TEXT NOT NULL,
                    count          INTEGER NOT NULL,
                    first_seen     INTEGER NOT NULL,
                    last_seen      INTEGER NOT NULL,
                    policy_version INTEGER NOT NULL,
                    batch_id       TEXT REFERENCES hit_batches(id)
                );
                -- The upsert key of queued rows; batched rows are frozen and may repeat it.
                CREATE UNIQUE INDEX hit_queue_open_key ON hit_queue(profile, domain, reason, client, source)
                    WHERE batch_id IS NULL;
                CREATE INDEX hit_queue_open_age ON hit_queue(profile, first_seen) WHERE batch_id IS NULL;
                CREATE INDEX hit_queue_batch ON hit_queue(batch_id) WHERE batch_id IS NOT NULL;
                -- Rows folded away by the queue bound, not yet handed to a batch as merged_events.
                CREATE TABLE hit_merge_pending (
                    profile        TEXT PRIMARY KEY NOT NULL,
                    merged_pending INTEGER NOT NULL
                );
                -- Batches the API refused with a 400, and their rows, kept for `status`.
                CREATE TABLE dead_letter_batches (
                    id             TEXT PRIMARY KEY NOT NULL,
                    profile        TEXT NOT NULL,
                    merged_events  INTEGER NOT NULL,
                    policy_version INTEGER NOT NULL,
                    error          TEXT NOT NULL,
                    dead_at        INTEGER NOT NULL
                );
                CREATE TABLE dead_letter (
                    id             INTEGER PRIMARY KEY,
                    batch_id       TEXT NOT NULL REFERENCES dead_letter_batches(id) ON DELETE CASCADE,
                    profile        TEXT NOT NULL,
                    domain         TEXT NOT NULL,
                    matched        TEXT,
                    reason         TEXT NOT NULL,
                    category       TEXT,
                    client         TEXT NOT NULL,
                    source         TEXT NOT NULL,
                    count          INTEGER NOT NULL,
                    first_seen     INTEGER NOT NULL,
                    last_seen      INTEGER NOT NULL,
                    policy_version INTEGER NOT NULL
                );
                CREATE INDEX dead_letter_profile ON dead_letter(profile);
                CREATE INDEX dead_letter_batch ON dead_letter(batch_id);
                -- Local hit history for `phosra-gate hits`, in time buckets so a week of
                -- 5-second flushes stays small; independent of delivery.
                CREATE TABLE hit_history (
                    profile    TEXT NOT NULL,
                    domain     TEXT NOT NULL,
                    reason     TEXT NOT NULL,
                    client     TEXT NOT NULL,
                    source     TEXT NOT NULL,
                    bucket     INTEGER NOT NULL,
                    matched    TEXT,
                    category   TEXT,
                    count      INTEGER NOT NULL,
                    first_seen INTEGER NOT NULL,
                    last_seen  INTEGER NOT NULL,
                    PRIMARY KEY (profile, domain, reason, client, source, bucket)
                );
                CREATE INDEX hit_history_last_seen ON hit_history(last_seen);
                -- Hourly web_activity counts (docs/sync.md#activity).
                CREATE TABLE activity_hours (
                    profile    TEXT NOT NULL,
                    hour_start INTEGER NOT NULL,
                    queries    INTEGER NOT NULL,
                    sent       INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (profile, hour_start)
                );
                CREATE TABLE activity_counts (
                    profile    TEXT NOT NULL,
                    hour_start INTEGER NOT NULL,
                    kind       TEXT NOT NULL CHECK (kind IN ('reason', 'category', 'engine')),
                    name       TEXT NOT NULL,
                    count      INTEGER NOT NULL,
                    PRIMARY KEY (profile, hour_start, kind, name),
                    FOREIGN KEY (profile, hour_start) REFERENCES activity_hours(profile, hour_start) ON DELETE CASCADE
                );
                -- `run`'s heartbeat (docs/configuration.md): one row, rewritten while it runs.
                CREATE TABLE heartbeat (
                    id         INTEGER PRIMARY KEY CHECK (id = 1),
                    pid        INTEGER NOT NULL,
                    started_at INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL,
                    version    TEXT NOT NULL,
                    listeners  TEXT NOT NULL
                );
                -- Lines for `status`: a database moved aside, and the like.
                CREATE TABLE notes (
                    id         INTEGER PRIMARY KEY,
                    created_at INTEGER NOT NULL,
                    text       TEXT NOT NULL
                );
                PRAGMA user_version = 1;
                """),
        Migration(
            version: 2,
            sql: """
                -- Whether a 404 (no active policy) left the profile unfiltered (`on_no_policy = allow`)
                -- or still enforcing the cached policy, so `status` can say which.
                ALTER TABLE sync_state ADD COLUMN no_policy_unfiltered INTEGER NOT NULL DEFAULT 0;
                PRAGMA user_version = 2;
                """),
        Migration(
            version: 3,
            sql: """
                -- The devices each profile served (docs/configuration.md#profiles): `status` lists
                -- those seen in the last hour. One row per device: its MAC when the neighbour
                -- table knew it, else its address.
                CREATE TABLE client_sightings (
                    profile    TEXT NOT NULL,
                    client     TEXT NOT NULL,
                    address    TEXT,
                    mac        TEXT,
                    first_seen INTEGER NOT NULL,
                    last_seen  INTEGER NOT NULL,
                    queries    INTEGER NOT NULL,
                    PRIMARY KEY (profile, client)
                );
                CREATE INDEX client_sightings_last_seen ON client_sightings(last_seen);
                PRAGMA user_version = 3;
                """),
        Migration(
            version: 4,
            sql: """
                -- App minutes (docs/services.md#budgets): per profile, local day (days since
                -- 1970) and service, the minutes used as a bit set (a restart does not refill a
                -- budget; the daily screen_time report counts them).
                CREATE TABLE service_minutes (
                    profile TEXT NOT NULL,
                    day     INTEGER NOT NULL,
                    service TEXT NOT NULL,
                    minutes BLOB NOT NULL,
                    PRIMARY KEY (profile, day, service)
                ) WITHOUT ROWID;
                -- The local days a profile was served, and whether their screen_time report was sent.
                CREATE TABLE screen_time_days (
                    profile TEXT NOT NULL,
                    day     INTEGER NOT NULL,
                    sent    INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (profile, day)
                ) WITHOUT ROWID;
                -- The budgets `run` enforces now, with today's minutes, for `status`.
                CREATE TABLE budget_status (
                    profile       TEXT NOT NULL,
                    service       TEXT NOT NULL,
                    day           INTEGER NOT NULL,
                    daily_minutes INTEGER NOT NULL,
                    used          INTEGER NOT NULL,
                    PRIMARY KEY (profile, service)
                ) WITHOUT ROWID;
                PRAGMA user_version = 4;
                """),
        Migration(
            version: 5,
            sql: """
                -- The parent's overrides on the gateway (docs/parent-page.md#overrides): kind is
                -- pause, extension, app_bonus (target = the service, minutes on the local day
                -- `day`) or exception (target = the name). A removed one keeps its row for the
                -- trail; `reported` once the API has it as a parent_override report.
                CREATE TABLE overrides (
                    id         INTEGER PRIMARY KEY,
                    profile    TEXT NOT NULL,
                    kind       TEXT NOT NULL,
                    target     TEXT,
                    minutes    INTEGER,
                    day        INTEGER,
                    starts_at  INTEGER NOT NULL,
                    ends_at    INTEGER,
                    set_by     TEXT NOT NULL,
                    removed_at INTEGER,
                    removed_by TEXT,
                    reported   INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX overrides_live ON overrides(ends_at) WHERE removed_at IS NULL;
                CREATE INDEX overrides_unreported ON overrides(id) WHERE reported = 0;
                -- Devices as the parent named and assigned them on the page: an assignment comes
                -- before the configuration's MAC and address entries (docs/parent-page.md#pages).
                CREATE TABLE devices (
                    mac         TEXT PRIMARY KEY NOT NULL,
                    name        TEXT,
                    profile     TEXT,
                    changed_at  INTEGER NOT NULL,
                    changed_by  TEXT NOT NULL
                ) WITHOUT ROWID;
                -- Sessions of the parent's page (docs/parent-page.md#security): the SHA-256 of the
                -- cookie's token, never the token; `password_tag` ties it to the password it was
                -- opened with, so a new password ends it.
                CREATE TABLE web_sessions (
                    token_hash   BLOB PRIMARY KEY NOT NULL,
                    password_tag TEXT NOT NULL,
                    csrf_token   TEXT NOT NULL,
                    address      TEXT NOT NULL,
                    created_at   INTEGER NOT NULL,
                    last_used_at INTEGER NOT NULL
                ) WITHOUT ROWID;
                PRAGMA user_version = 5;
                """),
        Migration(
            version: 6,
            sql: """
                -- Instants the parent's page keeps for itself, by name: `devices_seen`, up to
                -- which the parent has seen the devices (docs/parent-page.md#pages). Written
                -- only by a POST, so a GET still changes nothing.
                CREATE TABLE page_marks (
                    name TEXT PRIMARY KEY NOT NULL,
                    at   INTEGER NOT NULL
                ) WITHOUT ROWID;
                PRAGMA user_version = 6;
                """),
        Migration(
            version: 7,
            sql: """
                -- A child's block history on the parent's page, newest first: with this index
                -- the newest 50 of a profile are read from its end, whatever the planner
                -- knows of the table (a week of hits is hundreds of thousands of rows).
                CREATE INDEX hit_history_profile_last_seen ON hit_history(profile, last_seen);
                PRAGMA user_version = 7;
                """),
        Migration(
            version: 8,
            sql: """
                -- Bounded hits whatever the names (docs/sync.md#bounds): `names` is 0 for a
                -- row of the name asked, else the number of names folded into it (its domain
                -- is then `*.RULE` or `*`).
                ALTER TABLE hit_queue ADD COLUMN names INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE dead_letter ADD COLUMN names INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE hit_history ADD COLUMN names INTEGER NOT NULL DEFAULT 0;
                -- The queue bound reads the oldest queued rows of all profiles from here.
                CREATE INDEX hit_queue_open_order ON hit_queue(first_seen, id) WHERE batch_id IS NULL;
                -- What the bounds merged or dropped and the names folded past the rate, per
                -- profile since the store was made, for `status` and `/metrics`.
                CREATE TABLE hit_bound_totals (
                    profile      TEXT PRIMARY KEY NOT NULL,
                    queue_rows   INTEGER NOT NULL DEFAULT 0,
                    history_rows INTEGER NOT NULL DEFAULT 0,
                    names_folded INTEGER NOT NULL DEFAULT 0
                );
                PRAGMA user_version = 8;
                """),
        Migration(
            version: 9,
            sql: """
                -- A child's requests from its page (docs/requests-and-notifications.md): `kind`
                -- is time, app or site, `target` the app's id or the site's name; `device` the
                -- asking device (its MAC when known, else its address). Waiting while `answer`
                -- is NULL and `expires_at` (local midnight) is ahead; `override_id` is the
                -- override an allow made.
                CREATE TABLE requests (
                    id          INTEGER PRIMARY KEY,
                    profile     TEXT NOT NULL,
                    device      TEXT NOT NULL,
                    address     TEXT NOT NULL,
                    kind        TEXT NOT NULL CHECK (kind IN ('time', 'app', 'site')),
                    target      TEXT,
                    note        TEXT NOT NULL DEFAULT '',
                    asked_at    INTEGER NOT NULL,
                    expires_at  INTEGER NOT NULL,
                    answer      TEXT CHECK (answer IN ('allow', 'deny')),
                    minutes     INTEGER,
                    answered_at INTEGER,
                    answered_by TEXT,
                    override_id INTEGER
                );
                CREATE INDEX requests_device ON requests(device, asked_at);
                CREATE INDEX requests_waiting ON requests(expires_at) WHERE answer IS NULL;
                PRAGMA user_version = 9;
                """),
        Migration(
            version: 10,
            sql: """
                -- Notifications to the parent (docs/requests-and-notifications.md#notifications):
                -- `key` makes each event once (a request's id, a device, an app's day), `body`
                -- is the event as its JSON object; waiting while `sent_at` is NULL, tried again
                -- from `next_try_at`.
                CREATE TABLE notices (
                    id          INTEGER PRIMARY KEY,
                    key         TEXT NOT NULL UNIQUE,
                    kind        TEXT NOT NULL,
                    created_at  INTEGER NOT NULL,
                    body        TEXT NOT NULL,
                    attempts    INTEGER NOT NULL DEFAULT 0,
                    next_try_at INTEGER NOT NULL,
                    last_error  TEXT,
                    sent_at     INTEGER
                );
                CREATE INDEX notices_waiting ON notices(next_try_at, id) WHERE sent_at IS NULL;
                -- What the queue's bound dropped since the store was made, and when last.
                CREATE TABLE notice_totals (
                    id           INTEGER PRIMARY KEY CHECK (id = 1),
                    dropped      INTEGER NOT NULL DEFAULT 0,
                    last_dropped INTEGER
                );
                PRAGMA user_version = 10;
                """),
        Migration(
            version: 11,
            sql: """
                -- Each child's daily summary (docs/requests-and-notifications.md#the-daily-summary):
                -- one per profile and local day (days since 1970), as its JSON object.
                CREATE TABLE summaries (
                    profile TEXT NOT NULL,
                    day     INTEGER NOT NULL,
                    made_at INTEGER NOT NULL,
                    body    TEXT NOT NULL,
                    PRIMARY KEY (profile, day)
                );
                PRAGMA user_version = 11;
                """),
        Migration(
            version: 12,
            sql: """
                -- The shared store (docs/two-gateways.md): an override's identity among the
                -- gateways ("GATEWAY:ID" of the gateway that made it), and whether the shared
                -- store has each override and device as it is here (0: to be written there;
                -- kept across a restart and a server that is away).
                ALTER TABLE overrides ADD COLUMN uid TEXT;
                ALTER TABLE overrides ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
                CREATE UNIQUE INDEX overrides_uid ON overrides(uid) WHERE uid IS NOT NULL;
                CREATE INDEX overrides_unshared ON overrides(id) WHERE shared = 0;
                ALTER TABLE devices ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
                -- How far this gateway has read the shared store's changes, and how the
                -- connection stands, for `status`.
                CREATE TABLE shared_state (
                    id          INTEGER PRIMARY KEY CHECK (id = 1),
                    pulled      INTEGER NOT NULL DEFAULT 0,
                    connected   INTEGER NOT NULL DEFAULT 0,
                    since       INTEGER NOT NULL DEFAULT 0,
                    error       TEXT
                );
                PRAGMA user_version = 12;
                """),
        Migration(
            version: 13,
            sql: """
                -- Requests in the shared store (docs/two-gateways.md): asked on one gateway,
                -- answered on any. `uid` as for overrides; `override_uid` the shared identity
                -- of the override an answer made.
                ALTER TABLE requests ADD COLUMN uid TEXT;
                ALTER TABLE requests ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
                CREATE UNIQUE INDEX requests_uid ON requests(uid) WHERE uid IS NOT NULL;
                CREATE INDEX requests_unshared ON requests(id) WHERE shared = 0;
                PRAGMA user_version = 13;
                """),
        Migration(
            version: 14,
            sql: """
                -- The hit history and the hourly counts in the shared store
                -- (docs/two-gateways.md#what-is-shared), so each gateway's page shows the
                -- child's whole day. `shared_count`: the count the shared store has of a
                -- history row (NULL: none yet); `shared_changes`: the last of an hour's
                -- `changes` written there.
                ALTER TABLE hit_history ADD COLUMN shared_count INTEGER;
                CREATE INDEX hit_history_unshared ON hit_history(last_seen) WHERE shared_count IS NOT count;
                ALTER TABLE activity_hours ADD COLUMN changes INTEGER NOT NULL DEFAULT 1;
                ALTER TABLE activity_hours ADD COLUMN shared_changes INTEGER NOT NULL DEFAULT 0;
                -- History rows the shared store has that are gone here (folded under the
                -- history bound): written there as gone, so no page counts them twice.
                CREATE TABLE hit_history_gone (
                    profile   TEXT NOT NULL,
                    domain    TEXT NOT NULL,
                    reason    TEXT NOT NULL,
                    client    TEXT NOT NULL,
                    source    TEXT NOT NULL,
                    bucket    INTEGER NOT NULL,
                    last_seen INTEGER NOT NULL,
                    PRIMARY KEY (profile, domain, reason, client, source, bucket)
                ) WITHOUT ROWID;
                CREATE TRIGGER hit_history_gone AFTER DELETE ON hit_history WHEN old.shared_count IS NOT NULL
                BEGIN
                    INSERT OR REPLACE INTO hit_history_gone (profile, domain, reason, client, source, bucket, last_seen)
                    VALUES (old.profile, old.domain, old.reason, old.client, old.source, old.bucket, old.last_seen);
                END;
                -- The other gateways' history and hourly counts as the shared store has them,
                -- by gateway: the page adds them to this gateway's own.
                CREATE TABLE shared_hit_history (
                    gateway    TEXT NOT NULL,
                    profile    TEXT NOT NULL,
                    domain     TEXT NOT NULL,
                    reason     TEXT NOT NULL,
                    client     TEXT NOT NULL,
                    source     TEXT NOT NULL,
                    bucket     INTEGER NOT NULL,
                    matched    TEXT,
                    category   TEXT,
                    count      INTEGER NOT NULL,
                    first_seen INTEGER NOT NULL,
                    last_seen  INTEGER NOT NULL,
                    names      INTEGER NOT NULL,
                    PRIMARY KEY (gateway, profile, domain, reason, client, source, bucket)
                );
                CREATE INDEX shared_hit_history_profile_last_seen ON shared_hit_history(profile, last_seen);
                -- kind: `queries` (name empty), `reason`, `category` or `engine`, as in activity_counts.
                CREATE TABLE shared_activity (
                    gateway    TEXT NOT NULL,
                    profile    TEXT NOT NULL,
                    hour_start INTEGER NOT NULL,
                    kind       TEXT NOT NULL,
                    name       TEXT NOT NULL,
                    count      INTEGER NOT NULL,
                    PRIMARY KEY (profile, hour_start, kind, name, gateway)
                ) WITHOUT ROWID;
                ALTER TABLE shared_state ADD COLUMN history_pulled INTEGER NOT NULL DEFAULT 0;
                PRAGMA user_version = 14;
                """),
        Migration(
            version: 15,
            sql: """
                -- The page's sessions and password in the shared store (docs/two-gateways.md):
                -- `shared` = 0 while a session opened or used here is still to be written
                -- there; a session ended here at logout waits in `web_sessions_ended` to be
                -- ended on every gateway; `web_password` is the password's hash as last
                -- agreed with the shared store.
                ALTER TABLE web_sessions ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
                CREATE TABLE web_sessions_ended (
                    token_hash BLOB PRIMARY KEY NOT NULL,
                    ended_at   INTEGER NOT NULL
                ) WITHOUT ROWID;
                ALTER TABLE shared_state ADD COLUMN web_password TEXT;
                ALTER TABLE shared_state ADD COLUMN page_pulled INTEGER NOT NULL DEFAULT 0;
                PRAGMA user_version = 15;
                """),
        Migration(
            version: 16,
            sql: """
                -- Device assignments sent to the API as `parent_override` reports
                -- (docs/sync.md#parent-overrides): `report_to`, the profile to tell of the
                -- device's assignment or name; `report_from`, the profile to tell it left;
                -- `reported_profile`, the profile last told. Assignments made before this
                -- version are taken as told.
                ALTER TABLE devices ADD COLUMN report_to TEXT;
                ALTER TABLE devices ADD COLUMN report_from TEXT;
                ALTER TABLE devices ADD COLUMN reported_profile TEXT;
                UPDATE devices SET reported_profile = profile;
                PRAGMA user_version = 16;
                """),
        Migration(
            version: 17,
            sql: """
                -- The devices each gateway saw, in the shared store (docs/two-gateways.md):
                -- `shared_queries`, the count of queries the shared store has of a sighting
                -- (NULL: none yet); the other gateways' sightings as read from there.
                ALTER TABLE client_sightings ADD COLUMN shared_queries INTEGER;
                CREATE TABLE shared_sightings (
                    gateway    TEXT NOT NULL,
                    profile    TEXT NOT NULL,
                    client     TEXT NOT NULL,
                    address    TEXT,
                    mac        TEXT,
                    first_seen INTEGER NOT NULL,
                    last_seen  INTEGER NOT NULL,
                    queries    INTEGER NOT NULL,
                    PRIMARY KEY (profile, client, gateway)
                ) WITHOUT ROWID;
                PRAGMA user_version = 17;
                """),
        Migration(
            version: 18,
            sql: """
                -- Every history row gone here is written to the shared store as gone, shared
                -- yet or not (a row being written when a fold took it would stay there
                -- counted); a row back under the same key (a fold's `*` row made again) is
                -- written whole, and is no longer gone.
                DROP TRIGGER hit_history_gone;
                CREATE TRIGGER hit_history_gone AFTER DELETE ON hit_history
                BEGIN
                    INSERT OR REPLACE INTO hit_history_gone (profile, domain, reason, client, source, bucket, last_seen)
                    VALUES (old.profile, old.domain, old.reason, old.client, old.source, old.bucket, old.last_seen);
                END;
                CREATE TRIGGER hit_history_back AFTER INSERT ON hit_history
                BEGIN
                    DELETE FROM hit_history_gone WHERE profile = new.profile AND domain = new.domain
                        AND reason = new.reason AND client = new.client AND source = new.source
                        AND bucket = new.bucket;
                END;
                PRAGMA user_version = 18;
                """),
    ]

    /// The schema version this build writes and reads.
    static var latest: Int { all.last?.version ?? 0 }

    /// The database's `PRAGMA user_version`.
    static func version(of database: Database) throws(StoreError) -> Int {
        try database.integer("PRAGMA user_version")
    }

    /// Applies every migration above the database's version, each in its own transaction,
    /// so a crash between two leaves a database at a known version. A database newer than
    /// this build is refused, never downgraded. A failed migration is rolled back and
    /// reported as `.migration`.
    static func apply(to database: Database) throws(StoreError) {
        let current = try version(of: database)
        guard current <= latest else {
            throw .newerSchema(path: database.path, found: current, supported: latest)
        }
        for migration in all where migration.version > current {
            do throws(StoreError) {
                try database.transaction { () throws(StoreError) in
                    try database.execute(migration.sql)
                    let reached = try version(of: database)
                    guard reached == migration.version else {
                        throw .sqlite(
                            call: "PRAGMA user_version", code: SQLITE_ERROR,
                            message: "migration left user_version at \(reached)", path: database.path)
                    }
                }
            } catch {
                guard case .sqlite(_, let code, let message, _) = error else { throw error }
                throw .migration(version: migration.version, code: code, message: message, path: database.path)
            }
        }
    }
}
