import TestSupport
import Testing

@testable import DomainMatch

@Suite struct ListFileTests {
    private func parse(_ text: String) -> (entries: [String], stats: ListStats) {
        var entries: [String] = []
        let stats = ListFile.parse(Array(text.utf8)) { entries.append($0.description) }
        return (entries, stats)
    }

    @Test func readsEveryFormat() {
        let (entries, stats) = parse(
            """
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
        #expect(
            entries == [
                "plain.example.com", "upper.example.org", "a.example", "b.example", "v6host.example",
                "ads.example.net", "tracker.example.net", "url.example.com", "1.2.3.4",
            ])
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
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(UInt8(truncatingIfNeeded: seed >> 33))
        }
        let stats = ListFile.parse(bytes) { _ in }
        let newlines = bytes.filter { $0 == UInt8(ascii: "\n") }.count
        #expect(stats.lines == newlines + (bytes.last == UInt8(ascii: "\n") ? 0 : 1))
        #expect(stats.skipped > 0)
    }
}

@Suite struct ListFileScannerTests {
    /// Every token the fast path accepts gets the same verdict from the general path.
    @Test func fastPathAgreesWithTheGeneralPath() {
        var random = SeededRandom(seed: 99)
        let alphabet = Array("aZ0-_..*".utf8) + Array("bcxyz19".utf8)
        var scratch = [UInt8](repeating: 0, count: 256)
        var checked = 0
        for _ in 0..<50_000 {
            let length = Int.random(in: 0...20, using: &random)
            var token = (0..<length).map { _ in alphabet.randomElement(using: &random)! }
            if Bool.random(using: &random) { token = Array("*.".utf8) + token }
            let general = ListEntry.parse(String(decoding: token, as: UTF8.self), kind: .block)
            guard let fast = token.withUnsafeBytes({ FastName.check($0, into: &scratch) }) else { continue }
            checked += 1
            switch (fast, general) {
            case (.success(let count), .success(.name(let name))):
                #expect(Array(scratch[0..<count]) == name.bytes, "\(String(decoding: token, as: UTF8.self))")
            case (.failure(let a), .failure(let b)):
                #expect(a == b, "\(String(decoding: token, as: UTF8.self))")
            default:
                Issue.record("\(String(decoding: token, as: UTF8.self)): fast \(fast), general \(general)")
            }
        }
        #expect(checked > 20_000)
    }

    /// Lines cut anywhere by chunk boundaries read the same as the whole file.
    @Test func chunkBoundariesDoNotMatter() {
        let text =
            Array(
                """
                a.example\n0.0.0.0 b.example c.example # hosts\n||d.example^\r\nBücher.de\nbad..x\n!c\n
                """.utf8) + Array("e.example".utf8)
        func read(chunk: Int) -> ([String], ListStats) {
            var scanner = ListFileScanner()
            var names: [String] = []
            let sink: (ListItem) -> Void = {
                if case .name(let name) = $0 { names.append(String(decoding: name, as: UTF8.self)) }
            }
            var start = 0
            while start < text.count {
                let end = min(text.count, start + chunk)
                text[start..<end].withUnsafeBytes { scanner.feed($0, sink: sink) }
                start = end
            }
            let stats = scanner.finish(sink: sink)
            return (names, stats)
        }
        let (whole, stats) = read(chunk: text.count)
        #expect(whole == ["a.example", "b.example", "c.example", "d.example", "xn--bcher-kva.de", "e.example"])
        for chunk in 1...17 {
            let (names, chunkStats) = read(chunk: chunk)
            #expect(names == whole, "chunk \(chunk)")
            #expect(chunkStats == stats, "chunk \(chunk)")
        }
    }
}

extension ListFileScannerTests {
    @Test func aByteOrderMarkIsNotPartOfTheFirstEntry() {
        var names: [String] = []
        let stats = ListFile.parse([0xEF, 0xBB, 0xBF] + Array("first.example\nsecond.example\n".utf8)) {
            names.append($0.description)
        }
        #expect(names == ["first.example", "second.example"])
        #expect(stats.skipped == 0)
    }
}
