import DomainMatch
import Testing

@testable import Firewall

/// The file `firewall watch` writes and the daemon reads (docs/network.md#egress): what it
/// looks like, that it reads back as written, that a file it did not write is refused with
/// the line and what is wrong, and how its attempts age between the write and a read.
@Suite struct EgressAttemptsFileTests {
    static let kid4 = IPAddress("198.51.100.10")!
    static let kid6 = IPAddress("2001:db8:1::10")!
    static let sample = EgressAttemptsFile(
        read: 1_765_046_400,
        attempts: [
            EgressAttempt(client: kid4, transport: .udp, port: 5353, expires: 57),
            EgressAttempt(client: kid6, transport: .tcp, port: 8443, expires: 0),
            EgressAttempt(client: kid4, transport: .udp, port: 51820, expires: 60),
        ])

    func parse(_ text: String) throws(EgressAttemptsFile.ParseError) -> EgressAttemptsFile {
        try EgressAttemptsFile.parse(Array(text.utf8))
    }

    @Test func theTextIsTheDocumentedFormat() {
        #expect(
            Self.sample.text == """
                phosra-gate egress-attempts 2
                read 1765046400
                198.51.100.10 udp 5353 57
                2001:db8:1::10 tcp 8443 0
                198.51.100.10 udp 51820 60

                """)
    }

    @Test func whatIsWrittenReadsBack() throws {
        #expect(try parse(Self.sample.text) == Self.sample)
        let empty = EgressAttemptsFile(read: 0, attempts: [])
        #expect(empty.text == "phosra-gate egress-attempts 2\nread 0\n")
        #expect(try parse(empty.text) == empty)
        let absent = EgressAttemptsFile(read: 7, attempts: [], tableAbsent: true)
        #expect(absent.text == "phosra-gate egress-attempts 2\nread 7\ntable absent\n")
        #expect(try parse(absent.text) == absent)
    }

    /// The previous release's watch writes version 1, read alike; it never says the table
    /// is absent, and in it that line is not an element.
    @Test func versionOneStillReads() throws {
        let old = try parse("phosra-gate egress-attempts 1\nread 5\n198.51.100.10 udp 5353 57\n")
        #expect(old == EgressAttemptsFile(read: 5, attempts: [Self.sample.attempts[0]]))
        #expect(throws: EgressAttemptsFile.ParseError.fields(line: 3, count: 2)) {
            try parse("phosra-gate egress-attempts 1\nread 5\ntable absent\n")
        }
    }

    /// Two full sets, the longest addresses: within the size the daemon reads.
    @Test func fullSetsFitTheSizeLimit() throws {
        let longest = IPAddress("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff")!
        let attempt = EgressAttempt(client: longest, transport: .tcp, port: 65535, expires: 60)
        let file = EgressAttemptsFile(read: Int64.max, attempts: Array(repeating: attempt, count: 2 * 8192))
        #expect(file.text.utf8.count < EgressAttemptsFile.sizeLimit)
        #expect(try parse(file.text).attempts.count == 2 * 8192)
    }

    /// `expires` beyond the set's timeout (nft rounding up) is held to it, so the file
    /// the watch writes always parses.
    @Test func expiresIsHeldToTheTimeout() throws {
        let file = EgressAttemptsFile(
            read: 5, attempts: [EgressAttempt(client: Self.kid4, transport: .tcp, port: 1, expires: 61)])
        #expect(file.attempts[0].expires == Ruleset.refusedTimeoutSeconds)
        #expect(try parse(file.text) == file)
    }

    @Test(arguments: [
        ("", EgressAttemptsFile.ParseError.header(found: "")),
        ("\n", .header(found: "")),
        ("phosra-gate egress-attempts 3\nread 1\n", .header(found: "phosra-gate egress-attempts 3")),
        ("phosra-gate egress-attempts 2\nread 1\ntable absent\ntable absent\n", .fields(line: 4, count: 2)),
        ("{\"nftables\": []}\n", .header(found: "{\"nftables\": []}")),
        ("phosra-gate egress-attempts 1\n", .readLine(line: 2, found: "")),
        ("phosra-gate egress-attempts 1\nread\n", .readLine(line: 2, found: "read")),
        ("phosra-gate egress-attempts 1\nread -5\n", .readLine(line: 2, found: "read -5")),
        ("phosra-gate egress-attempts 1\nread 1\n198.51.100.10 udp 5353", .unterminated),
        ("phosra-gate egress-attempts 1\nread 1\n198.51.100.10 udp 5353\n", .fields(line: 3, count: 3)),
        ("phosra-gate egress-attempts 1\nread 1\n\n", .fields(line: 3, count: 1)),
        ("phosra-gate egress-attempts 1\nread 1\n198.51.100.10  udp 5353 5\n", .fields(line: 3, count: 5)),
        ("phosra-gate egress-attempts 1\nread 1\nkid udp 5353 5\n", .address(line: 3, found: "kid")),
        ("phosra-gate egress-attempts 1\nread 1\n198.51.100.10 icmp 8 5\n", .transport(line: 3, found: "icmp")),
        ("phosra-gate egress-attempts 1\nread 1\n198.51.100.10 udp 0 5\n", .port(line: 3, found: "0")),
        ("phosra-gate egress-attempts 1\nread 1\n198.51.100.10 udp 65536 5\n", .port(line: 3, found: "65536")),
        ("phosra-gate egress-attempts 1\nread 1\n198.51.100.10 udp +53 5\n", .port(line: 3, found: "+53")),
        ("phosra-gate egress-attempts 1\nread 1\n198.51.100.10 udp 53 61\n", .expires(line: 3, found: "61")),
        ("phosra-gate egress-attempts 1\nread 1\n198.51.100.10 udp 53 -1\n", .expires(line: 3, found: "-1")),
    ])
    func aFileTheWatchDidNotWriteIsRefused(text: String, error: EgressAttemptsFile.ParseError) {
        #expect(throws: error) { try parse(text) }
    }

    /// One bad line refuses the whole file, wherever it is, and says which line.
    @Test func aBadLineAfterGoodOnesRefusesTheFile() {
        let text = Self.sample.text + "198.51.100.10 udp 5353\n"
        #expect(throws: EgressAttemptsFile.ParseError.fields(line: 6, count: 3)) { try parse(text) }
        #expect(
            EgressAttemptsFile.ParseError.fields(line: 6, count: 3).description
                == "line 6: 3 fields, not ADDRESS PROTOCOL PORT EXPIRES")
    }

    /// Read some seconds after it was written, an attempt has that much less to go, and one
    /// already gone from the set is dropped: its end comes out the same whenever it is read.
    @Test func attemptsAgeFromTheRead() {
        let read = Self.sample.read
        #expect(Self.sample.current(at: read) == Self.sample.attempts)
        let later = Self.sample.current(at: read + 3)
        #expect(later.map(\.expires) == [54, 57])
        #expect(later.map(\.port) == [5353, 51820])
        #expect(Self.sample.current(at: read + 61).isEmpty)
        // A wall clock stepped back counts as no time at all.
        #expect(Self.sample.current(at: read - 100) == Self.sample.attempts)
    }
}
