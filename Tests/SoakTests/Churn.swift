import Foundation
import Locks
import TestSupport

/// Which local policy is on disk and since when, so the answers for the two names that
/// alternate are judged only once a swap has had time to take effect.
final class PolicyTimeline: Sendable {
    struct Moment: Equatable, Sendable {
        /// Bumped by every rename.
        let generation: Int
        let blocksA: Bool
        let changedAt: Double
    }

    /// The file is polled every half second (docs/configuration.md#signals); two seconds
    /// leave room for a loaded machine.
    static let settle = 2.0

    private let current = Lock(Moment(generation: 0, blocksA: true, changedAt: monotonicSeconds()))

    var now: Moment { current.withLock { $0 } }

    func swapped(to blocksA: Bool) {
        current.withLock { $0 = Moment(generation: $0.generation + 1, blocksA: blocksA, changedAt: monotonicSeconds()) }
    }

    /// Whether `name` (one of the two swap names) must be blocked for a query sent at
    /// `before` and answered at `after`; nil when a swap was near or in between.
    static func expectsBlocked(_ name: String, before: Moment, after: Moment, sentAt: Double) -> Bool? {
        guard before == after, sentAt - before.changedAt >= settle else { return nil }
        return (name == SoakNames.swapA) == before.blocksA
    }
}

/// The changes a long-running gateway lives through, on one thread: the local policy file
/// replaced by rename every 4 s (the blocked name alternating), `SIGHUP` every 20 s,
/// `SIGUSR1` every 15 s, and a new policy version on the API every 30 s.
final class Churn: @unchecked Sendable {
    static let tick = 1.0
    static let swapEvery = 4
    static let hangupEvery = 20
    static let syncNowEvery = 15
    static let apiChangeEvery = 30

    private let home: SoakGateway
    private let timeline: PolicyTimeline
    private let ledger: SoakLedger
    private var ticks = 0
    private var localVersion = 1
    private var apiVersion = 0

    init(home: SoakGateway, timeline: PolicyTimeline, ledger: SoakLedger) {
        self.home = home
        self.timeline = timeline
        self.ledger = ledger
    }

    func step() {
        ticks += 1
        if ticks % Self.swapEvery == 0 { swapLocalPolicy() }
        if ticks % Self.hangupEvery == 7 {
            home.gate.daemon.signal(SIGHUP)
            ledger.count(.sighups)
        }
        if ticks % Self.syncNowEvery == 3 {
            home.gate.daemon.signal(SIGUSR1)
            ledger.count(.sigusr1s)
        }
        if ticks % Self.apiChangeEvery == 11 {
            apiVersion += 1
            let extra = SoakNames.apiSwap[apiVersion % 2]
            home.api.updatePolicy(home.policyID) {
                $0.webFilter.blockedDomains = [SoakNames.hit, "always.blocked.test", extra]
            }
            ledger.count(.apiPolicyChanges)
        }
    }

    /// Writes the other policy beside the watched file and renames it over, as an editor
    /// or a configuration tool does.
    private func swapLocalPolicy() {
        let blocksA = !timeline.now.blocksA
        localVersion += 1
        do {
            let temporary = try home.scratch.write(
                "local.json.new", SoakGateway.localPolicy(blocksA: blocksA, version: localVersion))
            // The timeline moves first, so no answer that might already come from the new
            // file is judged by the old one.
            timeline.swapped(to: blocksA)
            guard rename(temporary, home.policyFile) == 0 else {
                ledger.wrong("could not rename the local policy: errno \(errno)")
                return
            }
            ledger.count(.policySwaps)
        } catch {
            ledger.wrong("could not write the local policy: \(error)")
        }
    }
}
