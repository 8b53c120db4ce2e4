import DomainMatch
import Firewall
import Glibc
import Locks
import Policy
import SystemIO
import TestSupport
import Testing

@testable import Gateway

/// The daemon's half of refused egress (docs/network.md#egress): the real reader on the
/// file `firewall watch` keeps, on a manual clock. Each element becomes one hit however
/// often it is read; a missing, malformed or stale file is a state of its own, and a
/// malformed one costs nothing that was or will be in a good one.
@Suite struct EgressWatcherTests {
    static let kid = IPAddress("198.51.100.10")!

    final class Hits: HitRecorder {
        let recorded = Lock<[Hit]>([])
        func record(_ hit: Hit) { recorded.withLock { $0.append(hit) } }
        var names: [String] { recorded.withLock { $0.map(\.name) } }
    }

    static func attempt(_ transport: EgressRule.Transport, _ port: UInt16, expires: Int) -> EgressAttempt {
        EgressAttempt(client: kid, transport: transport, port: port, expires: expires)
    }

    @Test func eachElementIsOneHitAndABadFileLosesNothing() throws {
        let scratch = try ScratchDirectory("pg-egress-watcher")
        let path = scratch.path("egress-attempts")
        let clock = ManualClock()
        let hits = Hits()
        var reader = EgressWatcher.Reader(
            file: path, profiles: { ProfileTable(single: .unfiltered, name: "kid") }, hits: hits, log: Logger(),
            clock: clock)
        let start = clock.wall().unixSeconds
        func write(_ text: String) throws { try Files.writeAtomically(path, Array(text.utf8)) }
        func advance(_ seconds: UInt64) { clock.advance(by: seconds * 1_000_000_000) }

        reader.readOnce()
        #expect(reader.state == .absent)

        // Written 3 s before the read, 10 s after the device tried: the hit has that time.
        try write(EgressAttemptsFile(read: start - 3, attempts: [Self.attempt(.udp, 5353, expires: 50)]).text)
        reader.readOnce()
        #expect(reader.state == .reading)
        #expect(hits.names == ["udp/5353"])
        #expect(hits.recorded.withLock { $0.map(\.time) } == [start - 13])
        #expect(hits.recorded.withLock { $0.map(\.profile) } == ["kid"])

        // The same file read again, and the next one naming the same element: no new hit.
        advance(5)
        reader.readOnce()
        try write(EgressAttemptsFile(read: start + 5, attempts: [Self.attempt(.udp, 5353, expires: 42)]).text)
        reader.readOnce()
        #expect(hits.names == ["udp/5353"])

        // A file the watch did not write: an error, no hit, and the tally kept.
        advance(5)
        try write("phosra-gate egress-attempts 1\nread \(start + 10)\n198.51.100.10 udp\n")
        reader.readOnce()
        #expect(reader.state == .malformed("line 3: 2 fields, not ADDRESS PROTOCOL PORT EXPIRES"))
        #expect(hits.names == ["udp/5353"])

        // Good again: the element already counted is not counted twice; one that came
        // while the file was bad is still there, and counted now.
        advance(5)
        try write(
            EgressAttemptsFile(
                read: start + 15,
                attempts: [Self.attempt(.udp, 5353, expires: 32), Self.attempt(.tcp, 8443, expires: 57)]
            ).text)
        reader.readOnce()
        #expect(reader.state == .reading)
        #expect(hits.names == ["udp/5353", "tcp/8443"])

        // The watch stops writing: stale once the file is 30 s old; its elements have
        // left the set by then and make no hit.
        advance(31)
        reader.readOnce()
        #expect(reader.state == .stale(start + 15))
        advance(30)
        reader.readOnce()
        #expect(reader.state == .stale(start + 15))
        #expect(hits.names == ["udp/5353", "tcp/8443"])

        // The file gone (the firewall's unit stopped): absent again.
        #expect(unlink(path) == 0)
        reader.readOnce()
        #expect(reader.state == .absent)
    }

    /// What each state tells the parent as `trouble`: nothing while the watch reads a
    /// table, the missing table, the watch's unit not running, or stopped.
    @Test func theFirewallTroubleFollowsWhatTheReadFound() throws {
        let scratch = try ScratchDirectory("pg-egress-trouble")
        let path = scratch.path("egress-attempts")
        let clock = ManualClock()
        var reader = EgressWatcher.Reader(
            file: path, profiles: { ProfileTable(single: .unfiltered, name: "kid") }, hits: Hits(), log: Logger(),
            clock: clock)
        let start = clock.wall().unixSeconds
        func write(_ file: EgressAttemptsFile) throws { try Files.writeAtomically(path, Array(file.text.utf8)) }
        #expect(reader.trouble == nil)

        reader.readOnce()
        #expect(reader.trouble?.check == "firewall")
        #expect(reader.trouble?.what.hasPrefix("the firewall's unit is not running") == true)

        try write(EgressAttemptsFile(read: start, attempts: [], tableAbsent: true))
        reader.readOnce()
        #expect(
            reader.trouble?.what == "table inet phosra_gate is missing: devices can use other DNS servers and go around"
        )

        try write(EgressAttemptsFile(read: start, attempts: [Self.attempt(.udp, 5353, expires: 50)]))
        reader.readOnce()
        #expect(reader.trouble == nil)

        clock.advance(by: 31_000_000_000)
        reader.readOnce()
        #expect(reader.trouble?.what == "firewall watch has stopped reading the table (its file is stale)")
    }
}
