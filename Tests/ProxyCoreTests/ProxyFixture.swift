import Bytes
import DomainMatch
import Policy
import Zoneinfo

@testable import ProxyCore

/// A snapshot over inline lists and a policy, and environments at hand-picked instants.
struct ProxyFixture {
    let snapshot: DecisionSnapshot
    var settings = ProxySettings(gatewayName: "test-gateway")
    static let client = IPAddress("192.168.1.20")!
    static let arrivedOn = Endpoint(.v4(0x7F00_0001), port: 3128)
    /// 2026-11-30 12:00 UTC, a Monday.
    static let noon: Int64 = 1_796_040_000

    init(
        policy: CompiledPolicy = ProxyFixture.policy(), options: DecisionOptions = DecisionOptions(),
        lists: [Category: [String]] = [.adult: ["adult.example"], .proxy: ["vpn.example"]], filtered: Bool = true
    ) {
        var trieLists = Array(repeating: [DomainName](), count: Category.allCases.count)
        for (category, names) in lists { trieLists[category.rawValue] = names.map { try! QueryName.parse($0) } }
        let trie = LabelTrie(lists: trieLists, listNames: Category.allCases.map(\.id))
        let engine = DecisionEngine(
            system: SystemRules(options), categories: CategorySet(matcher: trie, present: Set(lists.keys)),
            zone: .utc, profiles: ProfileTable(single: filtered ? PolicyRules(policy) : .unfiltered))
        snapshot = DecisionSnapshot(engine: engine)
    }

    /// Level moderate with safe search, reddit.com blocked, and `screenTime` JSON as given.
    static func policy(
        blocked: [String] = ["reddit.com"], allowed: [String] = [], safeSearch: Bool = true,
        downtime: (start: String, end: String)? = nil
    ) -> CompiledPolicy {
        var policy = CompiledPolicy()
        policy.webFilter.level = "moderate"
        policy.webFilter.safeSearch = safeSearch
        policy.webFilter.blockedDomains = blocked
        policy.webFilter.allowedDomains = allowed
        if let downtime {
            policy.screenTime.downtimeWindows = [
                .init(daysOfWeek: [], startTime: downtime.start, endTime: downtime.end)
            ]
        }
        return policy
    }

    /// The snapshot's profile of that name (what a lookup carries).
    func profile(_ name: String = "default") -> Profile { snapshot.engine.profiles.named(name)! }

    func env(now: UInt64 = 1_000_000_000, wallClock: Int64 = ProxyFixture.noon) -> ProxyEnvironment {
        ProxyEnvironment(snapshot: snapshot, settings: settings, now: now, wallClock: wallClock)
    }

    func connection(now: UInt64 = 1_000_000_000) -> ProxyConnection {
        ProxyConnection(client: Self.client, arrivedOn: Self.arrivedOn, now: now)
    }

    func policy(wallClock: Int64 = ProxyFixture.noon) -> TargetPolicy {
        env(wallClock: wallClock).policy(for: Self.client)
    }
}

extension ProxyConnection {
    /// Appends `text` as if read from the client and hands it in.
    mutating func receive(_ text: String, _ env: ProxyEnvironment) -> [ProxyAction] {
        clientIn.writeString(text)
        return clientInput(env)
    }

    mutating func receive(_ bytes: [UInt8], _ env: ProxyEnvironment) -> [ProxyAction] {
        clientIn.writeBytes(bytes)
        return clientInput(env)
    }

    mutating func receiveFromOrigin(_ text: String, _ env: ProxyEnvironment) -> [ProxyAction] {
        upstreamIn.writeString(text)
        return upstreamInput(env)
    }

    /// What the client was sent, consumed.
    mutating func takeClientOutput() -> String {
        let text = clientOut.readString(length: clientOut.readableBytes) ?? ""
        clientOut.clear()
        return text
    }

    mutating func takeUpstreamOutput() -> String {
        let text = upstreamOut.readString(length: upstreamOut.readableBytes) ?? ""
        upstreamOut.clear()
        return text
    }
}

extension Array where Element == ProxyAction {
    var hits: [Hit] {
        compactMap { if case .record(let hit) = $0 { return hit } else { return nil } }
    }
}
