import DomainMatch
import Policy
import Zoneinfo

/// The part of the gateway's published snapshot a proxy connection decides with: the
/// decision engine and its profiles (each with the activity counters it adds to). Made
/// once per published snapshot by the loop (a class, so each event's environment holds
/// one reference), immutable.
public final class DecisionSnapshot: Sendable {
    public let engine: DecisionEngine<LabelTrie>

    public init(engine: DecisionEngine<LabelTrie>) {
        self.engine = engine
    }
}

/// What a connection decides with at one instant: the loop's snapshot and settings and
/// the two clocks. Made by the loop for each event; tests make their own (manual time).
public struct ProxyEnvironment: Sendable {
    public let snapshot: DecisionSnapshot
    public let settings: ProxySettings
    /// Monotonic nanoseconds: deadlines.
    public let now: UInt64
    /// Unix seconds: the policy's clock, the block page, hits.
    public let wallClock: Int64
    /// `wallClock` on the policy zone's clock, when the loop already has it (its
    /// `ZoneClock`); nil: read from the zone when a decision needs it.
    public let local: LocalDateTime?

    /// Failed logins per client address, shared by every loop (nil: no limit, in tests).
    public let authLimiter: AuthFailureLimiter?

    public init(
        snapshot: DecisionSnapshot, settings: ProxySettings, now: UInt64, wallClock: Int64,
        local: LocalDateTime? = nil, authLimiter: AuthFailureLimiter? = nil
    ) {
        self.snapshot = snapshot
        self.settings = settings
        self.now = now
        self.wallClock = wallClock
        self.local = local
        self.authLimiter = authLimiter
    }

    /// The policy zone's wall clock at `wallClock`.
    private var localNow: LocalDateTime { local ?? snapshot.engine.zone.localDateTime(at: wallClock) }

    /// The profile that governs `client` (its hits, its activity, its policy); `mac` is the
    /// device's link-layer address when the neighbour table knew it at accept time.
    public func profile(for client: IPAddress, mac: MACAddress? = nil, user: String? = nil) -> Profile {
        snapshot.engine.profiles.choose(Client(address: client, mac: mac, proxyUser: user))
    }

    /// The policy of `client` now.
    public func policy(for client: IPAddress, mac: MACAddress? = nil, user: String? = nil) -> TargetPolicy {
        policy(of: profile(for: client, mac: mac, user: user))
    }

    /// The policy of a profile already chosen, now.
    public func policy(of profile: Profile) -> TargetPolicy {
        let engine = snapshot.engine
        return TargetPolicy(engine: engine, profile: profile, instant: wallClock, local: localNow, settings: settings)
    }

    /// `name` used by a device of `profile` now: a minute of its app service's budget
    /// (docs/services.md#budgets) and, when `online`, a minute online
    /// (docs/services.md#minutes-online).
    public func recordUse(of name: DomainName, by profile: Profile, online: Bool = true) {
        let engine = snapshot.engine
        engine.recordUse(of: name, by: profile, at: wallClock, local: localNow, online: online)
    }

    /// A hit from the proxy (docs/sync.md#hits): `name` as the client asked for it.
    public func hit(
        _ name: String, _ decision: Decision, client: IPAddress, mac: MACAddress? = nil, user: String? = nil,
        source: HitSource = .proxy
    ) -> Hit {
        Hit(
            profile: profile(for: client, mac: mac, user: user).name, name: name, decision: decision, client: client,
            source: source, time: wallClock)
    }
}
