import Testing
@testable import DomainMatch

@Suite struct ListFileTests {
    private func parse(_ text: String) -> (entries: [String], stats: ListStats) {
        var entries: [String] = []
        let stats = ListFile.parse(Array(text.utf8)) { entries.append($0.description) }
        return (entries, stats)
    }

    @Test func readsEveryFormat() {
        let (entries, stats) = parse("""
            # a comment
            ! an adblock comment

            plain.example.com
            Upper.Example.ORG   # trailing comment
            0.0.0.0 a.example b.example localhost
            127.0.0.1 localhost.localdomain broadcasthost local ip6-localhost 127.0.0.1
            ::1 ip6-loopback v6host.example
            ||ads.example.net^
            ||tracker.example.net
            @@||allowed.example.net^
            ||opts.example.net^$third-party
            ||path.example.net/banner^
            [Adblock Plus 2.0]
            com
            bad..name
            https://url.example.com/page
            1.2.3.4
            two names.example
            """)
        #expect(entries == ["plain.example.com", "upper.example.org", "a.example", "b.example", "v6host.example",
                            "ads.example.net", "tracker.example.net", "url.example.com", "1.2.3.4"])
        #expect(stats.lines == 19)
        #expect(stats.comments == 3)
        #expect(stats.names == 8)
        #expect(stats.ipEntries == 1)
        #expect(stats.skippedReserved == 7)
        #expect(stats.skippedAdblock == 4)
        #expect(stats.skippedSingleLabel == 1)
        #expect(stats.skippedInvalid == 2)
        #expect(stats.skipped == 14)
        #expect(stats.examples.count == ListStats.maxExamples)
    }

    @Test func handlesCRLFAndNoFinalNewline() {
        let (entries, stats) = parse("a.example\r\nb.example")
        #expect(entries == ["a.example", "b.example"])
        #expect(stats.lines == 2)
    }

    @Test func binaryGarbageIsCountedNotFatal() {
        var bytes: [UInt8] = []
        var seed: UInt64 = 42
        for _ in 0..<20_000 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            bytes.append(UInt8(truncatingIfNeeded: seed >> 33))
        }
        let stats = ListFile.parse(bytes) { _ in }
        let newlines = bytes.filter { $0 == UInt8(ascii: "\n") }.count
        #expect(stats.lines == newlines + (bytes.last == UInt8(ascii: "\n") ? 0 : 1))
        #expect(stats.skipped > 0)
    }
}
