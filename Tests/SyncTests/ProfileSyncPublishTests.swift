import EventLoop
import Locks
import Policy
import Store
import SystemIO
import TestSupport
import Testing

@testable import Sync

/// What a poll publishes to the proxies: only a change. A 404 with `on_no_policy = allow`
/// publishes `unfiltered` once, not at every poll (each publish re-decides every open
/// tunnel); a policy builds its rules once, for the proxies and the report alike.
@Suite(.blocking) struct ProfileSyncPublishTests {
    final class Published: Sendable {
        let rules = Lock<[PolicyRules]>([])
        let evaluated = Lock<[Int]>([])
        var count: Int { rules.withLock { $0.count } }
    }

    static func policy(version: Int) -> [UInt8] {
        Array(#"{"version": \#(version), "child_id": "c1", "policy_id": "p1"}"#.utf8)
    }

    /// A profile's sync on a store of its own, a recording API and a manual clock; what it
    /// publishes and reports goes to `published`.
    struct Fixture {
        let scratch: ScratchDirectory
        let clock = ManualClock(start: 1_000_000_000_000)
        let store: Store
        let api = RecordingAPI()
        let published = Published()
        let sync: ProfileSync

        init(keepOnNoPolicy: Bool) throws {
            scratch = try ScratchDirectory("pg-sync-publish")
            store = try Store.open(directory: scratch.path, now: clock.wall().unixSeconds)
            let published = self.published
            sync = try ProfileSync(
                profile: "default", childID: "c1", api: api, store: store, timing: SyncSchedule.Timing(),
                now: SyncTime(clock), keepOnNoPolicy: keepOnNoPolicy,
                apply: { rules in published.rules.withLock { $0.append(rules) } },
                evaluate: { policy, _ in
                    published.evaluated.withLock { $0.append(policy.version) }
                    return []
                }, log: { _, _ in })
        }
    }

    @Test func a404PublishesUnfilteredOnceAndAPolicyAfterItAgain() throws {
        let f = try Fixture(keepOnNoPolicy: false)
        defer { f.store.close() }
        let (api, published, sync, clock) = (f.api, f.published, f.sync, f.clock)

        api.fetchResult = .noPolicy
        for _ in 0..<5 { sync.step(now: SyncTime(clock), force: true) }
        #expect(api.fetches == 5)
        #expect(published.count == 1, "five 404 polls publish once")
        #expect(published.rules.withLock { $0.first?.filtered } == false)

        api.fetchResult = .policy(Self.policy(version: 3))
        sync.step(now: SyncTime(clock), force: true)
        #expect(published.count == 2)
        #expect(published.evaluated.withLock { $0 } == [3], "the report's results, from the rules published")
        api.fetchResult = .notModified
        sync.step(now: SyncTime(clock), force: true)
        #expect(published.count == 2, "a 304 publishes nothing")

        api.fetchResult = .noPolicy
        for _ in 0..<3 { sync.step(now: SyncTime(clock), force: true) }
        #expect(published.count == 3, "the policy withdrawn: unfiltered again, once")
    }

    @Test func a404KeepingThePolicyPublishesNothing() throws {
        let f = try Fixture(keepOnNoPolicy: true)
        defer { f.store.close() }
        f.api.fetchResult = .noPolicy
        for _ in 0..<3 { f.sync.step(now: SyncTime(f.clock), force: true) }
        #expect(f.published.count == 0)
    }
}
