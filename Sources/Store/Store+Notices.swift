/// A notification to the parent as queued (docs/requests-and-notifications.md#notifications).
public struct NoticeRow: Sendable, Equatable {
    public var id: Int64
    /// What makes the event once: a second enqueue with the same key is ignored.
    public var key: String
    public var kind: String
    /// Unix seconds.
    public var createdAt: Int64
    /// The event as its JSON object.
    public var body: String
    /// Deliveries tried and failed so far.
    public var attempts: Int

    public init(id: Int64 = 0, key: String, kind: String, createdAt: Int64, body: String, attempts: Int = 0) {
        self.id = id
        self.key = key
        self.kind = kind
        self.createdAt = createdAt
        self.body = body
        self.attempts = attempts
    }
}

/// The queue as `status`, `doctor` and `/metrics` show it.
public struct NoticeQueueState: Sendable, Equatable {
    /// Events not delivered yet.
    public var waiting: Int
    /// When the oldest of them was made (unix seconds).
    public var oldestWaiting: Int64?
    /// Why the last delivery failed, when the oldest waiting event has failed at least once.
    public var lastError: String?
    /// Events delivered since the store was made (those still kept), and the last one's time.
    public var sent: Int
    public var lastSent: Int64?
    /// Events the bound dropped, unsent, since the store was made, and when last.
    public var dropped: Int
    public var lastDropped: Int64?

    public init(
        waiting: Int = 0, oldestWaiting: Int64? = nil, lastError: String? = nil, sent: Int = 0, lastSent: Int64? = nil,
        dropped: Int = 0, lastDropped: Int64? = nil
    ) {
        self.waiting = waiting
        self.oldestWaiting = oldestWaiting
        self.lastError = lastError
        self.sent = sent
        self.lastSent = lastSent
        self.dropped = dropped
        self.lastDropped = lastDropped
    }
}

extension Store {
    private static let noticeColumns = "id, key, kind, created_at, body, attempts"

    private static func notice(_ row: Row) -> NoticeRow {
        NoticeRow(
            id: row.int64(0), key: row.text(1), kind: row.text(2), createdAt: row.int64(3), body: row.text(4),
            attempts: row.int(5))
    }

    /// Queues an event unless one with its key was queued before (sent or not); returns
    /// whether it was queued. Past `bound` waiting events the oldest waiting are dropped
    /// and counted: a receiver that stays away loses the oldest, never the newest.
    @discardableResult
    public func enqueueNotice(_ notice: NoticeRow, bound: Int) throws(StoreError) -> Bool {
        try write { database throws(StoreError) in
            try database.run(
                """
                INSERT INTO notices (key, kind, created_at, body, next_try_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (key) DO NOTHING
                """, notice.key, notice.kind, notice.createdAt, notice.body, notice.createdAt)
            guard database.changes == 1 else { return false }
            let waiting = try database.integer("SELECT count(*) FROM notices WHERE sent_at IS NULL")
            let excess = waiting - max(bound, 1)
            if excess > 0 {
                // The dropped rows stay as sent-never markers of their keys, so the event
                // is not made again; `sent_at = 0` tells them from delivered ones.
                try database.run(
                    """
                    UPDATE notices SET sent_at = 0, last_error = 'dropped: the queue was full'
                    WHERE id IN (SELECT id FROM notices WHERE sent_at IS NULL ORDER BY created_at, id LIMIT ?)
                    """, excess)
                try database.run(
                    """
                    INSERT INTO notice_totals (id, dropped, last_dropped) VALUES (1, ?1, ?2)
                    ON CONFLICT (id) DO UPDATE SET dropped = dropped + ?1, last_dropped = ?2
                    """, excess, notice.createdAt)
            }
            return true
        }
    }

    /// Waiting events due at `now`, oldest first, at most `limit`.
    public func dueNotices(now: Int64, limit: Int = 20) throws(StoreError) -> [NoticeRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT \(Self.noticeColumns) FROM notices
                WHERE sent_at IS NULL AND next_try_at <= ? ORDER BY created_at, id LIMIT ?
                """, now, limit, make: Self.notice)
        }
    }

    /// When the next waiting event is due (unix seconds), nil when none waits.
    public func nextNoticeDue() throws(StoreError) -> Int64? {
        try withDatabase { database throws(StoreError) in
            try database.firstRow("SELECT min(next_try_at) FROM notices WHERE sent_at IS NULL") {
                $0.optionalInt64(0)
            } ?? nil
        }
    }

    /// Every waiting event due at `now` at the latest: a start tries them at once, whatever
    /// pause the last run had reached.
    public func noticesDueNow(_ now: Int64) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run("UPDATE notices SET next_try_at = ?1 WHERE sent_at IS NULL AND next_try_at > ?1", now)
        }
    }

    /// The receiver took the event.
    public func markNoticeSent(id: Int64, now: Int64) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                "UPDATE notices SET sent_at = ?, last_error = NULL WHERE id = ? AND sent_at IS NULL", max(now, 1), id)
        }
    }

    /// A delivery failed: tried again from `retryAt`.
    public func noticeFailed(id: Int64, error: String, retryAt: Int64) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run(
                """
                UPDATE notices SET attempts = attempts + 1, last_error = ?, next_try_at = ?
                WHERE id = ? AND sent_at IS NULL
                """, error, retryAt, id)
        }
    }

    public func noticeQueueState() throws(StoreError) -> NoticeQueueState {
        try withDatabase { database throws(StoreError) in
            var state = NoticeQueueState()
            try database.forEach(
                """
                SELECT count(*), min(created_at),
                    (SELECT last_error FROM notices WHERE sent_at IS NULL ORDER BY created_at, id LIMIT 1)
                FROM notices WHERE sent_at IS NULL
                """
            ) { row in
                state.waiting = row.int(0)
                state.oldestWaiting = row.optionalInt64(1)
                state.lastError = row.optionalText(2)
                return false
            }
            try database.forEach("SELECT count(*), max(sent_at) FROM notices WHERE sent_at > 0") { row in
                state.sent = row.int(0)
                state.lastSent = row.optionalInt64(1)
                return false
            }
            try database.forEach("SELECT dropped, last_dropped FROM notice_totals WHERE id = 1") { row in
                state.dropped = row.int(0)
                state.lastDropped = row.optionalInt64(1)
                return false
            }
            return state
        }
    }

    /// The events of one kind made at or after `since`, oldest first: the summaries and
    /// the tests read what was notified.
    public func notices(kind: String? = nil, since: Int64) throws(StoreError) -> [NoticeRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT \(Self.noticeColumns) FROM notices
                WHERE created_at >= ?1 AND (?2 IS NULL OR kind = ?2) ORDER BY created_at, id
                """, since, kind, make: Self.notice)
        }
    }

    /// Forgets events made before `before` that are no longer waiting (kept 30 days, so a
    /// key made again within them is still known).
    public func pruneNotices(before: Int64) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run("DELETE FROM notices WHERE created_at < ? AND sent_at IS NOT NULL", before)
        }
    }
}
