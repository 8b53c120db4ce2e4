/// One child policy as the fake Phosra API stores it (docs/sync.md): its identity and
/// version, its place among the child's policies (priority, status), and the settings its
/// rules compile to. The child-dependent parts of a CompiledPolicy (`child_id`,
/// `child_age`, `age_group`, `age_rating`, the default `max_ratings`) are added when it is
/// served (`FakePolicy+JSON.swift`), so a birthday changes them without a new version.
public struct FakePolicy: Sendable, Equatable {
    public enum Status: String, Sendable { case active, paused, draft }

    public struct ContentFilter: Sendable, Equatable {
        /// Merged over the age defaults (a `content_rating` rule may add system ids).
        public var maxRatings: [String: String] = [:]
        public var blockedApps: [String] = []
        public var allowedApps: [String] = []
        public var allowlistMode = false
    }

    public struct AppLimit: Sendable, Equatable {
        public var bundleID: String
        public var dailyMinutes: Int
        public init(bundleID: String, dailyMinutes: Int) {
            self.bundleID = bundleID
            self.dailyMinutes = dailyMinutes
        }
    }

    public struct DowntimeWindow: Sendable, Equatable {
        public var daysOfWeek: [String]
        public var startTime: String
        public var endTime: String
        public init(daysOfWeek: [String], startTime: String, endTime: String) {
            self.daysOfWeek = daysOfWeek
            self.startTime = startTime
            self.endTime = endTime
        }
    }

    public struct TimeRange: Sendable, Equatable {
        public var start: String
        public var end: String
        public init(start: String, end: String) {
            self.start = start
            self.end = end
        }
    }

    /// A `time_scheduled_hours` rule; a half the rule lacks is `("", "")`.
    public struct Schedule: Sendable, Equatable {
        public var weekday: TimeRange
        public var weekend: TimeRange
        public init(weekday: TimeRange, weekend: TimeRange) {
            self.weekday = weekday
            self.weekend = weekend
        }
    }

    public struct ScreenTime: Sendable, Equatable {
        public var dailyLimitMinutes = 0
        /// Omitted from the JSON when empty.
        public var perAppLimits: [AppLimit] = []
        /// Omitted from the JSON when empty (the server makes at most one).
        public var downtimeWindows: [DowntimeWindow] = []
        /// Omitted from the JSON when nil.
        public var schedule: Schedule?
    }

    public struct Purchases: Sendable, Equatable {
        public var requireApproval = false
        public var blockIAP = false
        /// Omitted from the JSON when 0.
        public var spendingCapUSD: Double = 0
    }

    public struct Privacy: Sendable, Equatable {
        public var locationSharingEnabled = false
        public var profileVisibility = ""
        public var accountCreationApproval = false
        public var dataSharingRestricted = false
    }

    public struct Social: Sendable, Equatable {
        public var chatMode = ""
        public var dmRestriction = ""
        public var multiplayerMode = ""
    }

    /// Each key omitted from the JSON when empty or 0 (the object may be `{}`).
    public struct Notifications: Sendable, Equatable {
        public var curfewStart = ""
        public var curfewEnd = ""
        public var usageTimerMinutes = 0
    }

    /// Every list always present, `[]` when empty; strings verbatim, never normalised.
    public struct WebFilter: Sendable, Equatable {
        public var level = ""
        public var safeSearch = false
        public var blockedDomains: [String] = []
        public var allowedDomains: [String] = []
        public var blockedCategories: [String] = []
    }

    public var policyID: String
    /// `child_policies.version`: 1 when created, +1 per update (docs/sync.md).
    public var version: Int
    /// The lowest number wins among the active policies (docs/sync.md).
    public var priority: Int
    public var status: Status
    public var contentFilter = ContentFilter()
    public var screenTime = ScreenTime()
    public var purchases = Purchases()
    public var privacy = Privacy()
    public var social = Social()
    public var notifications = Notifications()
    public var webFilter = WebFilter()

    /// A policy without rules: every setting at its default.
    public init(policyID: String = FakeIDs.uuid(), version: Int = 1, priority: Int = 0, status: Status = .active) {
        self.policyID = policyID
        self.version = version
        self.priority = priority
        self.status = status
    }

    /// What quick setup with the default strictness leaves for a child of `age`
    /// (docs/sync.md): the level by age, safe search on, the allowed hours (written
    /// `"%d:00"` as the server's age generator does: `"7:00"`, and `"24:00"` from 17), the
    /// daily limit, the notification curfew; version 42 for a child, 38 for a teen.
    public static func quickSetup(age: Int, policyID: String = FakeIDs.uuid()) -> FakePolicy {
        var policy = FakePolicy(policyID: policyID, version: age < 13 ? 42 : 38)
        policy.webFilter.level = age <= 9 ? "strict" : age <= 12 ? "moderate" : "light"
        policy.webFilter.safeSearch = true
        let (weekdayEnd, weekendEnd) =
            age <= 6 ? (19, 20) : age <= 9 ? (20, 21) : age <= 12 ? (21, 22) : age <= 16 ? (22, 23) : (23, 24)
        policy.screenTime.schedule = Schedule(
            weekday: TimeRange(start: "7:00", end: "\(weekdayEnd):00"),
            weekend: TimeRange(start: "8:00", end: "\(weekendEnd):00"))
        policy.screenTime.dailyLimitMinutes = age <= 6 ? 60 : age <= 9 ? 90 : age <= 12 ? 120 : age <= 16 ? 180 : 240
        (policy.notifications.curfewStart, policy.notifications.curfewEnd, policy.notifications.usageTimerMinutes) =
            age < 13 ? ("20:00", "07:00", 15) : age <= 16 ? ("22:00", "06:00", 30) : ("00:00", "06:00", 60)
        policy.purchases.requireApproval = true
        policy.purchases.blockIAP = age < 13
        policy.privacy.profileVisibility = "private"
        policy.privacy.accountCreationApproval = age < 13
        policy.social.chatMode = age < 13 ? "friends_only" : ""
        policy.social.dmRestriction = age < 13 ? "none" : "contacts_only"
        return policy
    }
}

/// Random identifiers as the server makes them.
public enum FakeIDs {
    /// A random (version 4) UUID, lowercase.
    public static func uuid() -> String {
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = hexString(bytes)
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }

    /// 32 random bytes as 64 lowercase hex characters: a device key (docs/sync.md).
    public static func deviceKey() -> String { hexString((0..<32).map { _ in UInt8.random(in: 0...255) }) }

    public static func hexString(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        var text = ""
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }

    /// Go's `uuid.Parse` forms (canonical, `urn:uuid:`, braces, 32 bare hex digits) →
    /// the canonical lowercase form; nil for anything else.
    public static func canonicalUUID(_ text: String) -> String? {
        var body = Substring(text)
        if body.count == 45, body.lowercased().hasPrefix("urn:uuid:") { body = body.dropFirst(9) }
        if body.count == 38, body.first == "{", body.last == "}" { body = body.dropFirst().dropLast() }
        let characters = Array(body.lowercased())
        func isHex(_ c: Character) -> Bool { c.isHexDigit && c.isASCII }
        if characters.count == 32, characters.allSatisfy(isHex) {
            return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
        }
        guard characters.count == 36 else { return nil }
        for (index, character) in characters.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard character == "-" else { return nil }
            } else {
                guard isHex(character) else { return nil }
            }
        }
        return String(characters)
    }
}
