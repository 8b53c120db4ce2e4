import DomainMatch

/// One decision a parent made on the gateway on top of a profile's synced policy
/// (docs/parent-page.md#overrides). It starts at `start`, ends at `end` (nil: when the
/// parent removes it) and, once ended or removed, decides nothing.
public struct Override: Sendable, Equatable, Identifiable {
    public enum Kind: Sendable, Equatable {
        /// Every name blocked with reason `paused`, but the system names, `always_allow`
        /// and the services of `always_allowed_apps`.
        case pause
        /// The downtime and schedule cutoffs lifted.
        case `extension`
        /// `minutes` more of one service's daily budget, on the local day `day`.
        case appBonus(service: String, minutes: Int, day: Int)
        /// `minutes` more of the daily limit on the local day `day`.
        case dailyBonus(minutes: Int, day: Int)
        /// One name and its subdomains allowed, as a parent allow more specific than any
        /// list entry: never past a pause, a cutoff or the circumvention list.
        case exception(DomainName)
    }

    /// The store's row id: what the page removes it by.
    public let id: Int64
    public let profile: String
    public let kind: Kind
    /// Unix seconds.
    public let start: Int64
    public let end: Int64?
    /// Who set it: "page" and the client's address, or a command.
    public let setBy: String

    public init(id: Int64, profile: String, kind: Kind, start: Int64, end: Int64?, setBy: String) {
        self.id = id
        self.profile = profile
        self.kind = kind
        self.start = start
        self.end = end
        self.setBy = setBy
    }

    /// Whether it decides at `instant`.
    public func isActive(at instant: Int64) -> Bool {
        instant >= start && (end.map { instant < $0 } ?? true)
    }

    /// The kind's word, as the store and the API write it.
    public var kindName: String {
        switch kind {
        case .pause: "pause"
        case .extension: "extension"
        case .appBonus: "app_bonus"
        case .dailyBonus: "daily_bonus"
        case .exception: "exception"
        }
    }
}

/// The overrides of one profile, as the engine decides with them: immutable, swapped with
/// the snapshot when a parent changes one. Each question scans a list a parent made by
/// hand (a few entries), so nothing here is indexed; a profile without overrides costs
/// one check of `isEmpty`.
public struct Overrides: Sendable, Equatable {
    public let all: [Override]
    private let exceptions: [(name: DomainName, override: Override)]

    public static let none = Overrides([])

    public init(_ all: [Override]) {
        self.all = all
        exceptions = all.compactMap { override in
            if case .exception(let name) = override.kind { return (name, override) }
            return nil
        }
    }

    public var isEmpty: Bool { all.isEmpty }

    /// The pause in force at `instant`, the one ending last when several are.
    public func pause(at instant: Int64) -> Override? {
        latestEnding(at: instant) { $0 == .pause }
    }

    /// The extension in force at `instant`, the one ending last when several are.
    public func `extension`(at instant: Int64) -> Override? {
        latestEnding(at: instant) { $0 == .extension }
    }

    /// The exception covering `name` at `instant`: the most specific one.
    public func exception(for name: DomainName, at instant: Int64) -> Override? {
        var best: (labels: Int, override: Override)?
        for entry in exceptions where entry.override.isActive(at: instant) && name.isSubdomain(of: entry.name) {
            if best == nil || entry.name.labelCount > best!.labels { best = (entry.name.labelCount, entry.override) }
        }
        return best?.override
    }

    /// Bonus minutes of `service` on the local day `day` that are in force at `instant`.
    public func bonusMinutes(_ service: String, day: Int, at instant: Int64) -> Int {
        var total = 0
        for override in all where override.isActive(at: instant) {
            if case .appBonus(service: service, let minutes, day: day) = override.kind { total += minutes }
        }
        return total
    }

    /// Bonus minutes of the daily limit on the local day `day` in force at `instant`.
    public func dailyBonusMinutes(day: Int, at instant: Int64) -> Int {
        var total = 0
        for override in all where override.isActive(at: instant) {
            if case .dailyBonus(let minutes, day: day) = override.kind { total += minutes }
        }
        return total
    }

    /// The first start or end after `instant`: a cached answer may not live past it, and
    /// an open connection is decided again then.
    public func nextChange(after instant: Int64) -> Int64? {
        var next = Int64.max
        for override in all {
            if override.start > instant { next = min(next, override.start) }
            if let end = override.end, end > instant { next = min(next, end) }
        }
        return next == .max ? nil : next
    }

    /// Without the overrides that ended by `instant`.
    public func pruned(at instant: Int64) -> Overrides {
        Overrides(all.filter { $0.end.map { $0 > instant } ?? true })
    }

    public static func == (lhs: Overrides, rhs: Overrides) -> Bool { lhs.all == rhs.all }

    private func latestEnding(at instant: Int64, _ matches: (Override.Kind) -> Bool) -> Override? {
        var best: Override?
        for override in all where matches(override.kind) && override.isActive(at: instant) {
            guard let current = best else {
                best = override
                continue
            }
            if let currentEnd = current.end, override.end.map({ $0 > currentEnd }) ?? true { best = override }
        }
        return best
    }
}
