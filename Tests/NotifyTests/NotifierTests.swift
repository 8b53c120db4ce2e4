import Foundation
import HTTPClient
import Locks
import Store
import SystemIO
import TestSupport
import Testing

@testable import Notify

/// Delivery to a real HTTP receiver on loopback: each event once, oldest first; a receiver
/// that is down or answers 500 is tried again after a pause that grows, and gets every
/// event once it is back; a restart sends nothing twice.
@Suite(.serialized) struct NotifierTests {
    final class Receiver: @unchecked Sendable {
        let got = Lock<[TestHTTPServer.Request]>([])
        let status = Lock(200)
        var server: TestHTTPServer!

        init() throws {
            server = try TestHTTPServer { [unowned self] request in
                let answer = status.withLock { $0 }
                if answer == 200 { got.withLock { $0.append(request) } }
                return .respond(TestHTTPServer.Response(status: answer, text: answer == 200 ? "{}" : "busy"))
            }
        }

        var ids: [String] {
            got.withLock { $0 }.compactMap { Notice(json: String(decoding: $0.body, as: UTF8.self))?.id }
        }
    }

    let scratch: ScratchDirectory
    let store: Store
    let clock = ManualClock()

    init() throws {
        scratch = try ScratchDirectory("phosra-gate-notify")
        store = try Store.open(directory: scratch.path, now: clock.wall().unixSeconds)
    }

    func notifier(_ receiver: Receiver, format: NotifyTarget.Format = .json, bound: Int = 50) throws -> Notifier {
        try Notifier(
            target: NotifyTarget(url: try HTTPURL(receiver.server.origin + "/hook"), format: format, token: "t0ken"),
            events: Set(Notice.Kind.allCases), bound: bound, store: store,
            client: HTTPClient(userAgent: "test", clock: clock), clock: clock, log: Logger())
    }

    func event(_ number: Int) -> Notice {
        Notice(
            event: .ask, id: "ask:\(number)", time: clock.wall().unixSeconds, profile: "alice",
            title: "alice asks \(number)",
            message: "note \(number)")
    }

    @Test func eventsAreDeliveredOnceOldestFirstWithTheToken() throws {
        let receiver = try Receiver()
        let notifier = try notifier(receiver)
        for number in 1...3 { notifier.post(event(number)) }
        notifier.post(event(2))
        _ = notifier.runDue()
        _ = notifier.runDue()
        #expect(receiver.ids == ["ask:1", "ask:2", "ask:3"])
        let first = try #require(receiver.got.withLock { $0.first })
        #expect(first.method == "POST" && first.path == "/hook")
        #expect(first.header("Authorization") == "Bearer t0ken")
        #expect(first.header("Content-Type") == "application/json")
        #expect(try store.noticeQueueState().sent == 3)
    }

    @Test func onlyTheChosenEventsAreQueued() throws {
        let receiver = try Receiver()
        let notifier = try Notifier(
            target: NotifyTarget(url: try HTTPURL(receiver.server.origin + "/"), format: .json, token: nil),
            events: [.trouble], bound: 10, store: store, client: HTTPClient(userAgent: "t", clock: clock), clock: clock,
            log: Logger())
        notifier.post(event(1))
        _ = notifier.runDue()
        #expect(receiver.ids.isEmpty)
        #expect(try store.notices(since: 0).isEmpty)
    }

    @Test func aReceiverThatIsDownGetsEveryEventOnceItIsBack() throws {
        let receiver = try Receiver()
        receiver.server.stop()
        let notifier = try notifier(receiver)
        notifier.post(event(1))
        notifier.post(event(2))
        var wake = notifier.runDue()
        #expect(wake == clock.wall().unixSeconds + 2)
        var state = try store.noticeQueueState()
        #expect(state.waiting == 2 && state.lastError != nil)
        // Nothing is tried before the pause ends; the pauses grow: 2, 4, 8 s.
        _ = notifier.runDue()
        clock.advance(by: 2_000_000_000)
        wake = notifier.runDue()
        #expect(wake == clock.wall().unixSeconds + 4)
        clock.advance(by: 4_000_000_000)
        wake = notifier.runDue()
        #expect(wake == clock.wall().unixSeconds + 8)
        // The receiver answers 500 for a while: not taken, tried again.
        try receiver.server.start()
        receiver.status.withLock { $0 = 500 }
        clock.advance(by: 8_000_000_000)
        _ = notifier.runDue()
        #expect(receiver.ids.isEmpty)
        state = try store.noticeQueueState()
        #expect(state.lastError == "the receiver answered 500 Internal Server Error")
        receiver.status.withLock { $0 = 200 }
        notifier.post(event(3))
        clock.advance(by: 16_000_000_000)
        _ = notifier.runDue()
        #expect(receiver.ids == ["ask:1", "ask:2", "ask:3"])
        state = try store.noticeQueueState()
        #expect(state.waiting == 0 && state.sent == 3)
    }

    @Test func aRestartSendsWhatWaitsAndNothingTwice() throws {
        let receiver = try Receiver()
        let first = try notifier(receiver)
        first.post(event(1))
        _ = first.runDue()
        receiver.server.stop()
        first.post(event(2))
        _ = first.runDue()
        store.close()
        // The restart: a new store and notifier on the same directory.
        let reopened = try Store.open(directory: scratch.path, now: clock.wall().unixSeconds)
        try receiver.server.start()
        let second = try Notifier(
            target: NotifyTarget(url: try HTTPURL(receiver.server.origin + "/hook"), format: .json, token: nil),
            events: Set(Notice.Kind.allCases), bound: 50, store: reopened,
            client: HTTPClient(userAgent: "test", clock: clock), clock: clock, log: Logger())
        second.post(event(1))
        _ = second.runDue()
        #expect(receiver.ids == ["ask:1", "ask:2"])
    }

    @Test func ntfyReceivesTheMessageAndHeaders() throws {
        let receiver = try Receiver()
        let notifier = try notifier(receiver, format: .ntfy)
        notifier.post(
            Notices.ask(
                RequestRow(
                    id: 7, profile: "alice", device: "192.168.1.20", address: "192.168.1.20", kind: "time",
                    note: "<script>x</script>", askedAt: clock.wall().unixSeconds,
                    expiresAt: clock.wall().unixSeconds + 60),
                what: "More time", page: "https://gate.lan:8443/"))
        _ = notifier.runDue()
        let got = try #require(receiver.got.withLock { $0.first })
        #expect(got.header("Title") == "alice asks: More time")
        #expect(got.header("Priority") == "4")
        #expect(got.header("Tags") == "raising_hand")
        #expect(got.header("Click") == "https://gate.lan:8443/#request-7")
        #expect(
            String(decoding: got.body, as: UTF8.self)
                == "“<script>x</script>”\nFrom 192.168.1.20. Answer on the gateway's page.")
    }

    @Test func pastItsBoundAReceiverAwayLosesOnlyTheOldest() throws {
        let receiver = try Receiver()
        receiver.server.stop()
        let notifier = try notifier(receiver, bound: 3)
        for number in 1...5 { notifier.post(event(number)) }
        _ = notifier.runDue()
        try receiver.server.start()
        clock.advance(by: 2_000_000_000)
        _ = notifier.runDue()
        #expect(receiver.ids == ["ask:3", "ask:4", "ask:5"])
        let state = try store.noticeQueueState()
        #expect(state.dropped == 2 && state.sent == 3)
    }
}
