import DomainMatch

/// The gateway's own decision keys (docs/configuration.md), the same for every profile.
public struct DecisionOptions: Equatable, Sendable {
    public static let defaultAPI = "https://phosra-api.fly.dev/api/v1"

    /// Never blocked, not even in a cutoff (docs/decisions.md#the-decision-order, step 1).
    public var alwaysAllow: [String] = []
    /// Skip the cutoff step only (docs/decisions.md#the-decision-order, step 2).
    public var downtimeAllow: [String] = []
    /// Apply the circumvention step (docs/decisions.md#the-decision-order, step 4).
    public var blockBypass = true
    /// The parent's own background names, beside `BackgroundList`'s: they spend no minute
    /// online and pass the daily limit (docs/services.md#minutes-online).
    public var backgroundDomains: [String] = []
    /// The Phosra API base URL; its host is always allowed.
    public var api = DecisionOptions.defaultAPI

    public init() {}
}

/// `DecisionOptions` compiled into one small matcher: the lists every decision probes
/// before the policy's own.
public struct SystemRules: Sendable {
    static let systemList = 0, downtimeAllowList = 1, bypassList = 2, backgroundList = 3

    public let options: DecisionOptions
    let matcher: LabelTrie
    let systemIPs: Set<IPAddress>
    let downtimeAllowIPs: Set<IPAddress>
    /// Entries that could not be used, with why, for a warning.
    public let skipped: [String]

    public init(_ options: DecisionOptions) {
        self.options = options
        var skipped: [String] = []
        var system = ParsedList()
        var downtimeAllow = ParsedList()
        var background = ParsedList()
        for name in BackgroundList.entries { background.add(.name(name)) }
        switch ListEntry.parse(options.api, kind: .block, allowSingleLabel: true) {
        case .success(let entry): system.add(entry)
        case .failure(let why): skipped.append("api \"\(options.api)\": \(why)")
        }
        for raw in options.alwaysAllow {
            if case .failure(let why) = system.add(raw, kind: .allow) {
                skipped.append("always_allow \"\(raw)\": \(why)")
            }
        }
        for raw in options.downtimeAllow {
            if case .failure(let why) = downtimeAllow.add(raw, kind: .allow) {
                skipped.append("downtime_allow \"\(raw)\": \(why)")
            }
        }
        for raw in options.backgroundDomains {
            if case .failure(let why) = background.add(raw, kind: .allow) {
                skipped.append("background_domains \"\(raw)\": \(why)")
            }
        }
        matcher = LabelTrie(lists: [system.names, downtimeAllow.names, BypassList.entries, background.names])
        systemIPs = system.ips
        downtimeAllowIPs = downtimeAllow.ips
        self.skipped = skipped
    }

    /// Whether `name` spends no minute online (docs/services.md#minutes-online): a system
    /// name (the API, `always_allow`) or a background name.
    public func isQuiet(_ name: DomainName) -> Bool {
        let own = matcher.match(name)
        return own[Self.systemList] > 0 || own[Self.backgroundList] > 0
    }
}

/// Names and IP entries of one list, as parsed.
struct ParsedList {
    var names: [DomainName] = []
    var ips: Set<IPAddress> = []

    mutating func add(_ entry: ListEntry) {
        switch entry {
        case .name(let name): names.append(name)
        case .ip(let address): ips.insert(address)
        }
    }

    @discardableResult
    mutating func add(_ raw: String, kind: ListKind) -> Result<Void, SkipReason> {
        ListEntry.parse(raw, kind: kind).map { add($0) }
    }
}
