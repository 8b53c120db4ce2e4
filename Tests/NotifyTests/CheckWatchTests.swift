import Locks
import Testing

@testable import Notify

/// The daemon's own checks as `trouble` events: a check failing in two rounds in a row
/// makes one event per outage, whose id stays the same while it lasts.
@Suite struct CheckWatchTests {
    static let upstream = FailingCheck(
        check: "upstream", subject: "udp://127.0.0.1:9", what: "udp://127.0.0.1:9 does not answer (refused)",
        fix: "check the upstream")
    static let clock = FailingCheck(check: "clock", what: "not synchronised", fix: "start a time service")

    @Test func twoFailedRoundsInARowMakeOneEventPerOutage() {
        let watch = CheckWatch(checks: { [] })
        let page = "https://gate.lan:8443/"
        #expect(watch.notices(round: [Self.upstream], now: 1000, page: page).isEmpty)
        let second = watch.notices(round: [Self.upstream, Self.clock], now: 1300, page: page)
        #expect(second.map(\.id) == ["trouble:upstream:udp://127.0.0.1:9:1000"])
        #expect(second.first?.event == .trouble)
        #expect(second.first?.title == "Gateway: the upstream check fails")
        #expect(second.first?.message == "udp://127.0.0.1:9 does not answer (refused). To fix: check the upstream.")
        #expect(second.first?.data["subject"] == "udp://127.0.0.1:9")
        #expect(second.first?.click == page)
        // Still failing: the same event (the queue sends an id once); the clock's second round.
        #expect(
            watch.notices(round: [Self.upstream, Self.clock], now: 1600, page: page).map(\.id) == [
                "trouble:upstream:udp://127.0.0.1:9:1000", "trouble:clock:1300",
            ])
        // A round passes: the next failure is a new outage, once it fails twice.
        #expect(watch.notices(round: [Self.clock], now: 1900, page: page).map(\.id) == ["trouble:clock:1300"])
        #expect(watch.notices(round: [Self.upstream], now: 2200, page: page).isEmpty)
        #expect(
            watch.notices(round: [Self.upstream], now: 2500, page: page).map(\.id) == [
                "trouble:upstream:udp://127.0.0.1:9:2200"
            ])
    }

    /// A round only every five minutes: the probes cost a query to every upstream.
    @Test func roundsRunEveryFiveMinutes() {
        let rounds = Lock(0)
        let watch = CheckWatch(checks: {
            rounds.withLock { $0 += 1 }
            return [Self.upstream]
        })
        #expect(watch.due(now: 1000, page: nil).isEmpty)
        #expect(watch.due(now: 1015, page: nil).isEmpty)
        #expect(watch.due(now: 1299, page: nil).isEmpty)
        #expect(rounds.withLock { $0 } == 1)
        #expect(watch.due(now: 1300, page: nil).map(\.id) == ["trouble:upstream:udp://127.0.0.1:9:1000"])
        #expect(rounds.withLock { $0 } == 2)
    }
}
