/// What `run` says about itself while it runs (docs/configuration.md), for `status` to show. Whether
/// it is alive is the state directory's lock plus `updatedAt`, not this row alone.
public struct Heartbeat: Sendable, Equatable {
    public var pid: Int32
    /// Unix seconds.
    public var startedAt: Int64
    public var updatedAt: Int64
    /// phosra-gate's version.
    public var version: String
    /// One line per listener, e.g. `dns udp 127.0.0.1:5300`. No line may contain a newline.
    public var listeners: [String]

    public init(pid: Int32, startedAt: Int64, updatedAt: Int64, version: String, listeners: [String]) {
        self.pid = pid
        self.startedAt = startedAt
        self.updatedAt = updatedAt
        self.version = version
        self.listeners = listeners
    }
}

extension Store {
    /// Replaces the heartbeat row.
    public func writeHeartbeat(_ heartbeat: Heartbeat) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                """
                INSERT OR REPLACE INTO heartbeat (id, pid, started_at, updated_at, version, listeners)
                VALUES (1, ?, ?, ?, ?, ?)
                """, heartbeat.pid, heartbeat.startedAt, heartbeat.updatedAt, heartbeat.version,
                heartbeat.listeners.joined(separator: "\n"))
        }
    }

    /// The last heartbeat written, or nil when `run` never ran or stopped cleanly.
    public func heartbeat() throws(StoreError) -> Heartbeat? {
        try withDatabase { database throws(StoreError) in
            try database.firstRow("SELECT pid, started_at, updated_at, version, listeners FROM heartbeat WHERE id = 1")
            { row in
                let listeners = row.text(4)
                return Heartbeat(
                    pid: Int32(truncatingIfNeeded: row.int64(0)), startedAt: row.int64(1),
                    updatedAt: row.int64(2), version: row.text(3),
                    listeners: listeners.isEmpty ? [] : listeners.split(separator: "\n").map(String.init))
            }
        }
    }

    /// Removes the heartbeat: `run` is stopping cleanly.
    public func clearHeartbeat() throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run("DELETE FROM heartbeat")
        }
    }
}
