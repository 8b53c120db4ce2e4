/// A child's request as stored (docs/requests-and-notifications.md#asking).
public struct RequestRow: Sendable, Equatable {
    public var id: Int64
    public var profile: String
    /// The asking device: its MAC address when known, else its address.
    public var device: String
    public var address: String
    /// `time`, `app` or `site`.
    public var kind: String
    /// The app's id or the site's name.
    public var target: String?
    public var note: String
    /// Unix seconds.
    public var askedAt: Int64
    /// Local midnight after `askedAt`: unanswered, it is no longer waiting then.
    public var expiresAt: Int64
    /// `allow`, `deny`, or nil while waiting.
    public var answer: String?
    /// How long an allow lasts; nil: until midnight, or always for a site.
    public var minutes: Int?
    public var answeredAt: Int64?
    public var answeredBy: String?
    public var overrideID: Int64?
    /// Its identity among gateways that share a store (`GATEWAY:ID` of the one it was
    /// asked on); nil until the shared store has it.
    public var uid: String?

    public init(
        id: Int64 = 0, profile: String, device: String, address: String, kind: String, target: String? = nil,
        note: String = "", askedAt: Int64, expiresAt: Int64, answer: String? = nil, minutes: Int? = nil,
        answeredAt: Int64? = nil, answeredBy: String? = nil, overrideID: Int64? = nil, uid: String? = nil
    ) {
        self.id = id
        self.profile = profile
        self.device = device
        self.address = address
        self.kind = kind
        self.target = target
        self.note = note
        self.askedAt = askedAt
        self.expiresAt = expiresAt
        self.answer = answer
        self.minutes = minutes
        self.answeredAt = answeredAt
        self.answeredBy = answeredBy
        self.overrideID = overrideID
        self.uid = uid
    }

    public func isWaiting(at now: Int64) -> Bool { answer == nil && expiresAt > now }
}

/// Why a request was not stored.
public enum RequestRefusal: Error, Equatable, Sendable {
    /// The device has `waiting` requests waiting already (at most `RequestLimits.waiting`).
    case tooManyWaiting(waiting: Int)
    /// The device asked less than a minute ago: it may ask again at `retryAt`.
    case tooSoon(retryAt: Int64)
}

/// A device's share of the parent's attention.
public enum RequestLimits {
    /// Requests one device may have waiting at once.
    public static let waiting = 5
    /// Seconds between two requests of one device.
    public static let interval: Int64 = 60
}

extension Store {
    static let requestColumns =
        "id, profile, device, address, kind, target, note, asked_at, expires_at, answer, minutes, answered_at, "
        + "answered_by, override_id, uid"

    static func request(_ row: Row) -> RequestRow {
        RequestRow(
            id: row.int64(0), profile: row.text(1), device: row.text(2), address: row.text(3), kind: row.text(4),
            target: row.optionalText(5), note: row.text(6), askedAt: row.int64(7), expiresAt: row.int64(8),
            answer: row.optionalText(9), minutes: row.isNull(10) ? nil : row.int(10),
            answeredAt: row.optionalInt64(11), answeredBy: row.optionalText(12), overrideID: row.optionalInt64(13),
            uid: row.optionalText(14))
    }

    /// Stores a device's request (its `id` is ignored) when the device has fewer than
    /// `RequestLimits.waiting` waiting and asked nothing in the last minute; the checks and
    /// the insert are one transaction.
    public func addRequest(_ request: RequestRow) throws(StoreError) -> Result<RequestRow, RequestRefusal> {
        try write { database throws(StoreError) in
            let now = request.askedAt
            let last = try database.firstRow(
                "SELECT asked_at FROM requests WHERE device = ? ORDER BY asked_at DESC LIMIT 1", request.device
            ) { $0.int64(0) }
            if let last, now - last < RequestLimits.interval {
                return .failure(.tooSoon(retryAt: last + RequestLimits.interval))
            }
            let waiting = try database.integer(
                "SELECT count(*) FROM requests WHERE device = ? AND answer IS NULL AND expires_at > ?", request.device,
                now)
            guard waiting < RequestLimits.waiting else { return .failure(.tooManyWaiting(waiting: waiting)) }
            let id = try database.integer(
                """
                INSERT INTO requests (profile, device, address, kind, target, note, asked_at, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
                """, request.profile, request.device, request.address, request.kind, request.target, request.note,
                request.askedAt, request.expiresAt)
            var stored = request
            stored.id = Int64(id)
            return .success(stored)
        }
    }

    /// Requests still waiting at `now`, oldest first (every profile's when `profile` is nil).
    public func waitingRequests(now: Int64, profile: String? = nil) throws(StoreError) -> [RequestRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT \(Self.requestColumns) FROM requests
                WHERE answer IS NULL AND expires_at > ?1 AND (?2 IS NULL OR profile = ?2) ORDER BY id
                """, now, profile, make: Self.request)
        }
    }

    /// A device's requests asked since `since`, newest first, at most `limit`.
    public func requests(device: String, since: Int64, limit: Int = 20) throws(StoreError) -> [RequestRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT \(Self.requestColumns) FROM requests WHERE device = ? AND asked_at >= ?
                ORDER BY asked_at DESC, id DESC LIMIT ?
                """, device, since, limit, make: Self.request)
        }
    }

    /// A profile's requests asked in [`from`, `to`), oldest first.
    public func requests(profile: String, from: Int64, to: Int64) throws(StoreError) -> [RequestRow] {
        try withDatabase { database throws(StoreError) in
            try database.rows(
                """
                SELECT \(Self.requestColumns) FROM requests WHERE profile = ? AND asked_at >= ? AND asked_at < ?
                ORDER BY asked_at, id
                """, profile, from, to, make: Self.request)
        }
    }

    public func request(id: Int64) throws(StoreError) -> RequestRow? {
        try withDatabase { database throws(StoreError) in
            try database.firstRow(
                "SELECT \(Self.requestColumns) FROM requests WHERE id = ?", id, make: Self.request)
        }
    }

    /// Records the parent's answer to a request still waiting at `now`; nil when it is not
    /// (answered already, expired, or never asked), else the row as answered.
    public func answerRequest(
        id: Int64, answer: String, minutes: Int?, overrideID: Int64?, now: Int64, by: String
    ) throws(StoreError) -> RequestRow? {
        try write { database throws(StoreError) in
            try database.run(
                """
                UPDATE requests SET answer = ?, minutes = ?, override_id = ?, answered_at = ?, answered_by = ?,
                    shared = 0
                WHERE id = ? AND answer IS NULL AND expires_at > ?
                """, answer, minutes, overrideID, now, by, id, now)
            guard database.changes == 1 else { return nil }
            return try database.firstRow(
                "SELECT \(Self.requestColumns) FROM requests WHERE id = ?", id, make: Self.request)
        }
    }

    /// Forgets requests asked before `before` (kept 30 days for the parent's summaries).
    public func pruneRequests(before: Int64) throws(StoreError) {
        try write { database throws(StoreError) in
            try database.run("DELETE FROM requests WHERE asked_at < ?", before)
        }
    }
}
