import Foundation
import TestSupport
import Testing

/// DNS over TCP against what a hostile or broken client sends (docs/dns.md#dns-over-tcp):
/// messages that cannot be queries are answered or closed at once, a message trickled a
/// byte at a time is closed at its deadline, and a client at its cap loses its own
/// oldest idle connection.
@Suite(.serialized) struct TCPLimitsIntegrationTests {
    let scratch: ScratchDirectory
    let policy: String

    init() throws {
        scratch = try ScratchDirectory("pg-tcp-limits")
        policy = try scratch.write("p.json", PolicyDocuments.json(blocked: ["blocked.example"]))
        try scratch.write("lists/adult/list.txt", "adult.example\n")
    }

    private func start(_ extra: [String] = []) throws -> GateRun {
        try GateRun(
            ["--policy", policy, "--lists", scratch.path("lists"), "--upstream", "127.0.0.1:9"] + extra,
            scratch: scratch)
    }

    @Test func aZeroLengthMessageClosesAtOnce() throws {
        let gate = try start()
        let connection = try StreamClient(port: gate.port)
        connection.send([0, 0])
        let (closed, seconds) = timedSeconds { connection.readUntilClosed(timeout: 5) }
        #expect(closed == [], "closed without an answer")
        #expect(seconds < 2, "closed at once, not at the idle timeout (\(seconds) s)")
    }

    @Test func aShortMessageClosesAtOnce() throws {
        let gate = try start()
        let connection = try StreamClient(port: gate.port)
        connection.send([0, 5, 1, 2, 3, 4, 5])
        #expect(connection.readUntilClosed(timeout: 5) == [])
    }

    @Test func aQuestionCutShortGetsFORMERRAtOnce() throws {
        let gate = try start()
        let connection = try StreamClient(port: gate.port)
        let query = RawSockets.query("www.blocked.example", id: 0x4242)
        let cut = Array(query.prefix(12 + 5))
        connection.send([UInt8(cut.count >> 8), UInt8(cut.count & 0xFF)] + cut)
        let (answer, seconds) = timedSeconds { connection.readFrame(timeout: 5) }
        #expect(seconds < 2)
        #expect(answer.map { Array($0.prefix(2)) } == [0x42, 0x42], "answered with the query's id")
        #expect(answer.map { $0[3] & 0x0F } == 1, "FORMERR")
        // The connection still serves the next query.
        let next = RawSockets.query("x.blocked.example", id: 7)
        connection.send([UInt8(next.count >> 8), UInt8(next.count & 0xFF)] + next)
        #expect(connection.readFrame(timeout: 5).map { $0[3] & 0x0F } == 3, "NXDOMAIN")
    }

    @Test func aTrickledMessageIsClosedAtItsDeadlineWhateverTheBytes() throws {
        let gate = try start(["--tcp-read-timeout", "1500ms", "--tcp-idle", "20s"])
        let connection = try StreamClient(port: gate.port)
        let query = RawSockets.query("www.example.test", id: 9)
        let framed = [UInt8(query.count >> 8), UInt8(query.count & 0xFF)] + query
        let clock = ContinuousClock()
        let start = clock.now
        var closedAfter: Duration?
        for byte in framed.prefix(20) {
            connection.send([byte])
            if connection.readUntilClosed(timeout: 0.25) != nil {
                closedAfter = clock.now - start
                break
            }
        }
        #expect(closedAfter != nil, "still open after 20 bytes at 4 a second")
        if let closedAfter { #expect(closedAfter < .seconds(3), "\(closedAfter)") }
    }

    @Test func aClientAtItsCapLosesItsOldestIdleConnection() throws {
        let gate = try start(["--tcp-max-per-client", "2"])
        let first = try StreamClient(port: gate.port)
        Thread.sleep(forTimeInterval: 0.05)
        let second = try StreamClient(port: gate.port)
        Thread.sleep(forTimeInterval: 0.05)
        let third = try StreamClient(port: gate.port)
        #expect(first.readUntilClosed(timeout: 3) == [], "the oldest idle connection was shed")
        let query = RawSockets.query("y.blocked.example", id: 11)
        for connection in [second, third] {
            connection.send([UInt8(query.count >> 8), UInt8(query.count & 0xFF)] + query)
            #expect(connection.readFrame(timeout: 5).map { $0[3] & 0x0F } == 3, "NXDOMAIN")
        }
    }
}

func timedSeconds<T>(_ body: () throws -> T) rethrows -> (T, TimeInterval) {
    let start = Date()
    let result = try body()
    return (result, Date().timeIntervalSince(start))
}
