import FoundationEssentials

/// The parts of a CompiledPolicy (docs/sync.md) that a gateway enforces, decoded
/// tolerantly: unknown keys ignored, every key optional with the server's own default,
/// `null` read as empty, strings kept exactly as sent (they are normalised when the
/// rules are built). A value of the wrong JSON type is an error naming its path.
public struct CompiledPolicy: Equatable, Sendable {
    public var version: Int = 0
    public var childID: String = ""
    public var policyID: String = ""
    public var status: String = ""
    public var childAge: Int = 0
    /// Kept as sent: it has 0–9 fractional digits and nothing here needs it as a time.
    public var generatedAt: String = ""
    public var screenTime = ScreenTime()
    public var webFilter = WebFilter()
    public var contentFilter = ContentFilter()
    public var social = Social()
    public var privacy = Privacy()

    public init() {}

    public struct Privacy: Equatable, Sendable {
        /// Control D's adapter maps it to blocking ads and trackers; so does the gateway.
        public var dataSharingRestricted = false
        public init() {}
    }

    public struct ScreenTime: Equatable, Sendable {
        public var dailyLimitMinutes: Int = 0
        /// Absent and empty are the same: no downtime.
        public var downtimeWindows: [DowntimeWindow] = []
        /// nil when the key is absent (no `time_scheduled_hours` rule).
        public var schedule: Schedule?
        /// Bundle ids of the apps that stay usable in downtime (the server always sends
        /// Phone, Messages and Maps).
        public var alwaysAllowedApps: [String] = []
        /// Daily minutes per app; absent: none.
        public var perAppLimits: [AppLimit] = []
        public init() {}
    }

    public struct AppLimit: Equatable, Sendable {
        public var bundleID: String = ""
        public var dailyMinutes: Int = 0
        public init(bundleID: String = "", dailyMinutes: Int = 0) {
            self.bundleID = bundleID
            self.dailyMinutes = dailyMinutes
        }
    }

    public struct ContentFilter: Equatable, Sendable {
        /// Bundle ids of the apps the parent blocked.
        public var blockedApps: [String] = []
        /// Only the allowed apps may be used: a gateway cannot tell apps from the rest of
        /// the web, so it is reported unsupported.
        public var allowlistMode = false
        public init() {}
    }

    public struct Social: Equatable, Sendable {
        /// `none`, `contacts_only`, `everyone` or empty.
        public var dmRestriction: String = ""
        /// `off`, `none`, `disabled` block online play; anything else is not enforced.
        public var multiplayerMode: String = ""
        public init() {}
    }

    public struct DowntimeWindow: Equatable, Sendable {
        /// nil when absent; absent or empty means every day.
        public var daysOfWeek: [String]?
        public var startTime: String = ""
        public var endTime: String = ""
        public init(daysOfWeek: [String]? = nil, startTime: String = "", endTime: String = "") {
            self.daysOfWeek = daysOfWeek
            self.startTime = startTime
            self.endTime = endTime
        }
    }

    public struct Schedule: Equatable, Sendable {
        public var weekday = Span()
        public var weekend = Span()
        public init(weekday: Span = Span(), weekend: Span = Span()) {
            self.weekday = weekday
            self.weekend = weekend
        }
    }

    public struct Span: Equatable, Sendable {
        public var start: String = ""
        public var end: String = ""
        public init(start: String = "", end: String = "") {
            self.start = start
            self.end = end
        }
    }

    public struct WebFilter: Equatable, Sendable {
        public var level: String = ""
        public var safeSearch = false
        public var blockedDomains: [String] = []
        public var allowedDomains: [String] = []
        public var blockedCategories: [String] = []
        public init() {}
    }
}
