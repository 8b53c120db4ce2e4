import Foundation
import TestSupport
import Testing

/// DNS over TCP against what a hostile or broken client sends (docs/dns.md#dns-over-tcp):
/// messages that cannot be queries are answered or closed at once (one longer than a query
/// may be from its length prefix), a message trickled a
/// byte at a time is closed at its deadline, and a client at its cap loses its own
/// oldest idle connection.
@Suite(.serialized, .blocking) struct TCPLimitsIntegrationTests {
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

    /// The longest query taken is 4,096 bytes, over TCP as over UDP: a longer length prefix
    /// closes the connection before its bytes are read, and one of exactly 4,096 is answered.
    @Test func aLengthPrefixOverTheQueryLimitClosesAtOnce() throws {
        let gate = try start()
        let longest = Self.paddedQuery("z.blocked.example", id: 0x0B0B, length: 4096)
        let answered = try StreamClient(port: gate.port)
        answered.send([0x10, 0x00] + longest)
        let answer = answered.readFrame(timeout: 5)
        #expect(answer.map { Array($0.prefix(2)) } == [0x0B, 0x0B], "answered with the query's id")
        #expect(answer.map { $0[3] & 0x0F } == 3, "NXDOMAIN for a query of 4,096 bytes")

        let refused = try StreamClient(port: gate.port)
        refused.send([0x10, 0x01] + Self.paddedQuery("z.blocked.example", id: 0x0C0C, length: 4097))
        let (closed, seconds) = timedSeconds { refused.readUntilClosed(timeout: 5) }
        #expect(closed == [], "closed without an answer")
        #expect(seconds < 2, "closed at once, not at the read timeout (\(seconds) s)")
    }

    /// Messages that would be the longest a length prefix can name, each all but complete,
    /// on many connections: the gateway keeps none of their bytes. Before the limit, each
    /// connection held 64 KiB until its read timeout (1,000 of them: over 60 MB).
    @Test func messagesOfTheLongestLengthHoldNoMemory() throws {
        let gate = try start(["--tcp-max-per-client", "0", "--tcp-max", "0"])
        let before = gate.daemon.residentBytes
        let body = [UInt8](repeating: 0, count: 60_000)
        var connections: [StreamClient] = []
        for _ in 0..<1000 {
            let connection = try StreamClient(port: gate.port)
            connection.send([0xFF, 0xFF] + body)
            connections.append(connection)
        }
        // Every one closed by the gateway, each from its prefix.
        let closed = connections.filter { $0.readUntilClosed(timeout: 3) != nil }.count
        #expect(closed == connections.count, "\(closed) of \(connections.count) closed")
        let growth = gate.daemon.peakResidentBytes - before
        #expect(growth < 8 << 20, "the peak resident set grew by \(growth >> 20) MiB")
    }

    /// A query of exactly `length` bytes: the question, then an OPT record whose padding
    /// option (RFC 7830) fills the rest.
    static func paddedQuery(_ name: String, id: UInt16, length: Int) -> [UInt8] {
        var query = RawSockets.query(name, id: id)
        query[11] = 1
        let padding = length - query.count - 11 - 4
        let rdata = 4 + padding
        query += [0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, UInt8(rdata >> 8), UInt8(rdata & 0xFF)]
        query += [0, 12, UInt8(padding >> 8), UInt8(padding & 0xFF)] + [UInt8](repeating: 0, count: padding)
        return query
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
        let query = RawSockets.query("y.blocked.example", id: 11)
        /// One answered query: the daemon has taken the connection, and it is idle again.
        func answered(_ connection: StreamClient) -> Bool {
            connection.send([UInt8(query.count >> 8), UInt8(query.count & 0xFF)] + query)
            return connection.readFrame(timeout: 5).map { $0[3] & 0x0F } == 3
        }
        // Each taken before the next opens, so which is oldest is not left to the scheduler.
        let first = try StreamClient(port: gate.port)
        #expect(answered(first), "NXDOMAIN")
        let second = try StreamClient(port: gate.port)
        #expect(answered(second), "NXDOMAIN")
        let third = try StreamClient(port: gate.port)
        #expect(first.readUntilClosed(timeout: 3) == [], "the oldest idle connection was shed")
        for connection in [second, third] { #expect(answered(connection), "NXDOMAIN") }
    }
}

func timedSeconds<T>(_ body: () throws -> T) rethrows -> (T, TimeInterval) {
    let start = Date()
    let result = try body()
    return (result, Date().timeIntervalSince(start))
}
