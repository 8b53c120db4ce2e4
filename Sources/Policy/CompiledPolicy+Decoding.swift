import FoundationEssentials

/// A policy document that cannot be read, with the JSON path of the offending value.
public struct PolicyDecodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Dotted path with indices, e.g. `web_filter.blocked_domains[2]`; `(top level)` for the root.
    public let path: String
    public let problem: String
    public var description: String { "\(path): \(problem)" }
}

extension CompiledPolicy {
    /// Decodes a CompiledPolicy document (the body of `GET /device/policy`, or a local file).
    public static func decode(_ data: some Collection<UInt8>) throws(PolicyDecodingError) -> CompiledPolicy {
        do {
            let bytes = Array(data)
            let json = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
            return try JSONDecoder().decode(CompiledPolicy.self, from: Data(json))
        } catch let error as DecodingError {
            throw PolicyDecodingError(error)
        } catch {
            throw PolicyDecodingError(path: "(top level)", problem: "\(error)")
        }
    }
}

extension PolicyDecodingError {
    init(_ error: DecodingError) {
        func pathText(_ codingPath: [any CodingKey]) -> String {
            var text = ""
            for key in codingPath {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += text.isEmpty ? key.stringValue : "." + key.stringValue
                }
            }
            return text.isEmpty ? "(top level)" : text
        }
        switch error {
        case .typeMismatch(let type, let context):
            self.init(path: pathText(context.codingPath), problem: "expected \(PolicyDecodingError.jsonName(type))")
        case .valueNotFound(let type, let context):
            self.init(
                path: pathText(context.codingPath),
                problem: "expected \(PolicyDecodingError.jsonName(type)), found null")
        case .keyNotFound(let key, let context):
            self.init(path: pathText(context.codingPath + [key]), problem: "missing")
        case .dataCorrupted(let context):
            let underlying = context.underlyingError.map { ": \($0)" } ?? ""
            let problem = context.codingPath.isEmpty ? "not valid JSON\(underlying)" : context.debugDescription
            self.init(path: pathText(context.codingPath), problem: problem)
        @unknown default:
            self.init(path: "(top level)", problem: "\(error)")
        }
    }

    static func jsonName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type: return "an integer"
        case is Bool.Type: return "true or false"
        case is [String].Type, is [Any].Type: return "an array"
        default:
            let name = "\(type)"
            return name.hasPrefix("Array") || name.hasPrefix("[") ? "an array" : "an object"
        }
    }
}

/// Decoding helpers: a missing key or `null` gives the default; a wrong type throws.
extension KeyedDecodingContainer {
    func lenient<T: Decodable>(_ key: Key, default value: T) throws -> T {
        try decodeIfPresent(T.self, forKey: key) ?? value
    }

    /// A string array; `null` elements are dropped (defensive: the server never sends them).
    func lenientStrings(_ key: Key) throws -> [String]? {
        try decodeIfPresent([String?].self, forKey: key).map { $0.compactMap { $0 } }
    }
}

private struct Key: CodingKey {
    let stringValue: String
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}

extension CompiledPolicy: Decodable {
    public init(from decoder: any Decoder) throws {
        let root = try decoder.container(keyedBy: Key.self)
        version = try root.lenient(Key("version"), default: 0)
        childID = try root.lenient(Key("child_id"), default: "")
        policyID = try root.lenient(Key("policy_id"), default: "")
        status = try root.lenient(Key("status"), default: "")
        childAge = try root.lenient(Key("child_age"), default: 0)
        generatedAt = try root.lenient(Key("generated_at"), default: "")
        screenTime = try root.lenient(Key("screen_time"), default: ScreenTime())
        webFilter = try root.lenient(Key("web_filter"), default: WebFilter())
        contentFilter = try root.lenient(Key("content_filter"), default: ContentFilter())
        social = try root.lenient(Key("social"), default: Social())
        privacy = try root.lenient(Key("privacy"), default: Privacy())
    }
}

extension CompiledPolicy.Privacy: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        dataSharingRestricted = try container.lenient(Key("data_sharing_restricted"), default: false)
    }
}

extension CompiledPolicy.ContentFilter: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        blockedApps = try container.lenientStrings(Key("blocked_apps")) ?? []
        allowlistMode = try container.lenient(Key("allowlist_mode"), default: false)
    }
}

extension CompiledPolicy.Social: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        dmRestriction = try container.lenient(Key("dm_restriction"), default: "")
        multiplayerMode = try container.lenient(Key("multiplayer_mode"), default: "")
    }
}

extension CompiledPolicy.AppLimit: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        bundleID = try container.lenient(Key("bundle_id"), default: "")
        dailyMinutes = try container.lenient(Key("daily_minutes"), default: 0)
    }
}

extension CompiledPolicy.ScreenTime: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        dailyLimitMinutes = try container.lenient(Key("daily_limit_minutes"), default: 0)
        downtimeWindows = try container.lenient(Key("downtime_windows"), default: [])
        schedule = try container.decodeIfPresent(CompiledPolicy.Schedule.self, forKey: Key("schedule"))
        alwaysAllowedApps = try container.lenientStrings(Key("always_allowed_apps")) ?? []
        perAppLimits = try container.lenient(Key("per_app_limits"), default: [])
    }
}

extension CompiledPolicy.DowntimeWindow: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        daysOfWeek = try container.lenientStrings(Key("days_of_week"))
        startTime = try container.lenient(Key("start_time"), default: "")
        endTime = try container.lenient(Key("end_time"), default: "")
    }
}

extension CompiledPolicy.Schedule: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        weekday = try container.lenient(Key("weekday"), default: CompiledPolicy.Span())
        weekend = try container.lenient(Key("weekend"), default: CompiledPolicy.Span())
    }
}

extension CompiledPolicy.Span: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        start = try container.lenient(Key("start"), default: "")
        end = try container.lenient(Key("end"), default: "")
    }
}

extension CompiledPolicy.WebFilter: Decodable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        level = try container.lenient(Key("level"), default: "")
        safeSearch = try container.lenient(Key("safe_search"), default: false)
        blockedDomains = try container.lenientStrings(Key("blocked_domains")) ?? []
        allowedDomains = try container.lenientStrings(Key("allowed_domains")) ?? []
        blockedCategories = try container.lenientStrings(Key("blocked_categories")) ?? []
    }
}
