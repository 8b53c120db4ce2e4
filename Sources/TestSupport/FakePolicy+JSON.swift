/// A `FakePolicy` as the server's `CompilePolicy` emits it (docs/sync.md): keys in Go
/// struct order, `omitempty` keys absent when empty, web and app lists always arrays; and
/// read back from such a document (the example files in `Tests/PolicyTests/Fixtures`).
extension FakePolicy {
    /// The CompiledPolicy for a child, `status` always "active" (only the selected active
    /// policy is ever served).
    public func compiled(childID: String, childAge: Int, generatedAt: String) -> TestJSON {
        let defaults = Self.ratings(forAge: childAge)
        let ratings = defaults.maxRatings.merging(contentFilter.maxRatings) { $1 }
        func strings(_ items: [String]) -> TestJSON { .array(items.map { .string($0) }) }
        func int(_ value: Int) -> TestJSON { .number(String(value)) }

        var screen: [(String, TestJSON)] = [("daily_limit_minutes", int(screenTime.dailyLimitMinutes))]
        if !screenTime.perAppLimits.isEmpty {
            screen.append(
                (
                    "per_app_limits",
                    .array(
                        screenTime.perAppLimits.map {
                            .object([("bundle_id", .string($0.bundleID)), ("daily_minutes", int($0.dailyMinutes))])
                        })
                ))
        }
        if !screenTime.downtimeWindows.isEmpty {
            screen.append(
                (
                    "downtime_windows",
                    .array(
                        screenTime.downtimeWindows.map {
                            .object([
                                ("days_of_week", strings($0.daysOfWeek)), ("start_time", .string($0.startTime)),
                                ("end_time", .string($0.endTime)),
                            ])
                        })
                ))
        }
        screen.append(("always_allowed_apps", strings(Self.alwaysAllowedApps)))
        if let schedule = screenTime.schedule {
            func range(_ range: TimeRange) -> TestJSON {
                .object([("start", .string(range.start)), ("end", .string(range.end))])
            }
            screen.append(
                ("schedule", .object([("weekday", range(schedule.weekday)), ("weekend", range(schedule.weekend))])))
        }
        var purchaseFields: [(String, TestJSON)] = [
            ("require_approval", .bool(purchases.requireApproval)),
            ("block_iap", .bool(purchases.blockIAP)),
        ]
        if purchases.spendingCapUSD != 0 {
            purchaseFields.append(("spending_cap_usd", .number(Self.goFloat(purchases.spendingCapUSD))))
        }
        var notificationFields: [(String, TestJSON)] = []
        if !notifications.curfewStart.isEmpty {
            notificationFields.append(("curfew_start", .string(notifications.curfewStart)))
        }
        if !notifications.curfewEnd.isEmpty {
            notificationFields.append(("curfew_end", .string(notifications.curfewEnd)))
        }
        if notifications.usageTimerMinutes != 0 {
            notificationFields.append(("usage_timer_minutes", int(notifications.usageTimerMinutes)))
        }

        return .object([
            ("version", int(version)),
            ("child_id", .string(childID)),
            ("child_age", int(childAge)),
            ("age_group", .string(Self.ageGroup(childAge))),
            ("policy_id", .string(policyID)),
            ("status", "active"),
            ("generated_at", .string(generatedAt)),
            (
                "content_filter",
                .object([
                    ("age_rating", .string(defaults.ageRating)),
                    ("max_ratings", .object(ratings.keys.sorted().map { ($0, .string(ratings[$0]!)) })),
                    ("blocked_apps", strings(contentFilter.blockedApps)),
                    ("allowed_apps", strings(contentFilter.allowedApps)),
                    ("allowlist_mode", .bool(contentFilter.allowlistMode)),
                ])
            ),
            ("screen_time", .object(screen)),
            ("purchases", .object(purchaseFields)),
            (
                "privacy",
                .object([
                    ("location_sharing_enabled", .bool(privacy.locationSharingEnabled)),
                    ("profile_visibility", .string(privacy.profileVisibility)),
                    ("account_creation_approval", .bool(privacy.accountCreationApproval)),
                    ("data_sharing_restricted", .bool(privacy.dataSharingRestricted)),
                ])
            ),
            (
                "social",
                .object([
                    ("chat_mode", .string(social.chatMode)), ("dm_restriction", .string(social.dmRestriction)),
                    ("multiplayer_mode", .string(social.multiplayerMode)),
                ])
            ),
            ("notifications", .object(notificationFields)),
            (
                "web_filter",
                .object([
                    ("level", .string(webFilter.level)), ("safe_search", .bool(webFilter.safeSearch)),
                    ("blocked_domains", strings(webFilter.blockedDomains)),
                    ("allowed_domains", strings(webFilter.allowedDomains)),
                    ("blocked_categories", strings(webFilter.blockedCategories)),
                ])
            ),
        ])
    }

    /// Hard-coded by the compiler (docs/sync.md).
    public static let alwaysAllowedApps = ["com.apple.mobilephone", "com.apple.MobileSMS", "com.apple.Maps"]

    /// `internal/ratings/mapper.go`'s age groups.
    public static func ageGroup(_ age: Int) -> String {
        switch age {
        case ..<7: "Young Child"
        case 7...9: "Child"
        case 10...12: "Pre-Teen"
        case 13...16: "Teen"
        case 17: "Older Teen"
        default: "Adult"
        }
    }

    /// The Apple age rating and default `max_ratings` for an age. The rows for 7–9, 10–12
    /// and 13–16 are those of the example policies; the others are plausible stand-ins.
    public static func ratings(forAge age: Int) -> (ageRating: String, maxRatings: [String: String]) {
        let row: [String] =
            switch age {
            case ..<7: ["4+", "4+", "5+", "E", "G", "3", "TV-Y"]
            case 7...9: ["4+", "4+", "7+", "E", "PG", "7", "TV-Y7"]
            case 10...12: ["9+", "9+", "10+", "E10+", "PG", "7", "TV-PG"]
            case 13...16: ["12+", "12+", "13+", "T", "PG-13", "12", "TV-14"]
            default: ["17+", "17+", "17+", "M", "R", "18", "TV-MA"]
            }
        return (
            row[0], ["apple": row[1], "csm": row[2], "esrb": row[3], "mpaa": row[4], "pegi": row[5], "tvpg": row[6]]
        )
    }

    /// Go's float64 JSON text for the values a cap takes (`25`, `12.5`).
    static func goFloat(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }

    /// Reads a CompiledPolicy document (e.g. an example file). `max_ratings` entries that
    /// differ from the age defaults become overrides; `child_*` fields are the child's, not
    /// the policy's, and are ignored.
    public init(compiledPolicyJSON text: String) throws {
        let json = try TestJSON.parse(text)
        func strings(_ value: TestJSON?) -> [String] { value?.array?.compactMap(\.string) ?? [] }
        self.init(policyID: json["policy_id"]?.string ?? FakeIDs.uuid(), version: json["version"]?.int ?? 1)
        let content = json["content_filter"]
        let age = json["child_age"]?.int ?? 10
        let defaults = Self.ratings(forAge: age).maxRatings
        for member in content?["max_ratings"]?.members ?? [] {
            if let value = member.value.string, defaults[member.key] != value {
                contentFilter.maxRatings[member.key] = value
            }
        }
        contentFilter.blockedApps = strings(content?["blocked_apps"])
        contentFilter.allowedApps = strings(content?["allowed_apps"])
        contentFilter.allowlistMode = content?["allowlist_mode"]?.bool ?? false
        let screen = json["screen_time"]
        screenTime.dailyLimitMinutes = screen?["daily_limit_minutes"]?.int ?? 0
        screenTime.perAppLimits =
            screen?["per_app_limits"]?.array?.map {
                AppLimit(bundleID: $0["bundle_id"]?.string ?? "", dailyMinutes: $0["daily_minutes"]?.int ?? 0)
            } ?? []
        screenTime.downtimeWindows =
            screen?["downtime_windows"]?.array?.map {
                DowntimeWindow(
                    daysOfWeek: strings($0["days_of_week"]), startTime: $0["start_time"]?.string ?? "",
                    endTime: $0["end_time"]?.string ?? "")
            } ?? []
        if let schedule = screen?["schedule"] {
            func range(_ value: TestJSON?) -> TimeRange {
                TimeRange(start: value?["start"]?.string ?? "", end: value?["end"]?.string ?? "")
            }
            screenTime.schedule = Schedule(weekday: range(schedule["weekday"]), weekend: range(schedule["weekend"]))
        }
        let purchase = json["purchases"]
        purchases.requireApproval = purchase?["require_approval"]?.bool ?? false
        purchases.blockIAP = purchase?["block_iap"]?.bool ?? false
        if case .number(let text)? = purchase?["spending_cap_usd"] { purchases.spendingCapUSD = Double(text) ?? 0 }
        let privacyJSON = json["privacy"]
        privacy.locationSharingEnabled = privacyJSON?["location_sharing_enabled"]?.bool ?? false
        privacy.profileVisibility = privacyJSON?["profile_visibility"]?.string ?? ""
        privacy.accountCreationApproval = privacyJSON?["account_creation_approval"]?.bool ?? false
        privacy.dataSharingRestricted = privacyJSON?["data_sharing_restricted"]?.bool ?? false
        social.chatMode = json["social"]?["chat_mode"]?.string ?? ""
        social.dmRestriction = json["social"]?["dm_restriction"]?.string ?? ""
        social.multiplayerMode = json["social"]?["multiplayer_mode"]?.string ?? ""
        notifications.curfewStart = json["notifications"]?["curfew_start"]?.string ?? ""
        notifications.curfewEnd = json["notifications"]?["curfew_end"]?.string ?? ""
        notifications.usageTimerMinutes = json["notifications"]?["usage_timer_minutes"]?.int ?? 0
        let web = json["web_filter"]
        webFilter.level = web?["level"]?.string ?? ""
        webFilter.safeSearch = web?["safe_search"]?.bool ?? false
        webFilter.blockedDomains = strings(web?["blocked_domains"])
        webFilter.allowedDomains = strings(web?["allowed_domains"])
        webFilter.blockedCategories = strings(web?["blocked_categories"])
    }
}
