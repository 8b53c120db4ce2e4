import DNSProxy
import DomainMatch
import EventLoop
import Policy

/// What a connection decides with at one instant: the loop's snapshot and settings and
/// the two clocks. Made by the loop for each event; tests make their own (manual time).
public struct ProxyEnvironment: Sendable {
    public let snapshot: ProxySnapshot
    public let settings: ProxySettings
    /// Monotonic nanoseconds: deadlines.
    public let now: Nanoseconds
    /// Unix seconds: the policy's clock, the block page, hits.
    public let wallClock: Int64

    public init(snapshot: ProxySnapshot, settings: ProxySettings, now: Nanoseconds, wallClock: Int64) {
        self.snapshot = snapshot
        self.settings = settings
        self.now = now
        self.wallClock = wallClock
    }

    /// The policy of `client` now.
    public func policy(for client: IPAddress) -> TargetPolicy {
        let engine = snapshot.engine
        return TargetPolicy(engine: engine, rules: engine.profiles.rules(for: Client(address: client)),
                            local: engine.zone.localDateTime(at: wallClock), settings: settings)
    }

    /// A hit from the proxy (SPEC §7.4): `name` as the client asked for it.
    public func hit(_ name: String, _ decision: Decision, client: IPAddress) -> Hit {
        Hit(profile: snapshot.profileName, name: name, decision: decision, client: client, source: .proxy, time: wallClock)
    }
}
