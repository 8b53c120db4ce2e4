import Testing

@testable import DomainMatch

@Suite struct ListEntryTests {
    private func parse(_ raw: String, _ kind: ListKind = .block) -> String {
        switch ListEntry.parse(raw, kind: kind) {
        case .success(.name(let name)): return name.description
        case .success(.ip(let address)): return "ip:\(address)"
        case .failure(let reason): return "skip:\(reason)"
        }
    }

    @Test func normalisesMessyParentEntries() {
        #expect(parse("reddit.com") == "reddit.com")
        #expect(parse("  Discord.gg ") == "discord.gg")
        #expect(parse("*.4chan.org") == "4chan.org")
        #expect(parse(".example.org") == "example.org")
        #expect(parse("https://www.TikTok.com/foryou") == "www.tiktok.com")
        #expect(parse("HTTP://user:pw@Example.com:8080/x?y") == "example.com")
        #expect(parse("example.com:443") == "example.com")
        #expect(parse("example.com.") == "example.com")
        #expect(parse("example.com/") == "example.com")
        #expect(parse("Bücher.de") == "xn--bcher-kva.de")
        #expect(parse("youtube.com/watch?v=1") == "youtube.com")
        #expect(parse("example.com#top") == "example.com")
    }

    @Test func pathsAreSkippedOnAllowLists() {
        #expect(parse("youtube.com/watch?v=1", .allow) == "skip:\(SkipReason.pathOnAllowList)")
        #expect(parse("https://www.TikTok.com/foryou", .allow) == "skip:\(SkipReason.pathOnAllowList)")
        #expect(parse("example.com?q=1", .allow) == "skip:\(SkipReason.pathOnAllowList)")
        #expect(parse("https://khanacademy.org/", .allow) == "khanacademy.org")
        #expect(parse("http://1.2.3.4/page", .allow) == "skip:\(SkipReason.pathOnAllowList)")
    }

    @Test func ipLiteralsBecomeIPEntries() {
        #expect(parse("1.2.3.4") == "ip:1.2.3.4")
        #expect(parse(" 1.2.3.4:443 ") == "ip:1.2.3.4")
        #expect(parse("2001:DB8::1") == "ip:2001:db8::1")
        #expect(parse("[2001:db8::1]") == "ip:2001:db8::1")
        #expect(parse("[2001:db8::1]:443") == "ip:2001:db8::1")
        #expect(parse("https://[::1]:8443/") == "ip:::1")
        #expect(parse("http://10.0.0.1/") == "ip:10.0.0.1")
        // Found by the list-lines fuzz target: these were names, whose text form then read
        // back as an address. A dotted quad is an address however it was written.
        #expect(parse("0.0.0.0.") == "ip:0.0.0.0")
        #expect(parse("*.1.2.3.4") == "ip:1.2.3.4")
        #expect(parse(".192.0.2.1.") == "ip:192.0.2.1")
        #expect(parse("1.2.3.04") == "1.2.3.04")
        var items: [ListEntry] = []
        _ = ListFile.parse(Array("0.0.0.0.\n*.10.0.0.1\n".utf8)) { items.append($0) }
        #expect(items == [.ip(IPAddress("0.0.0.0")!), .ip(IPAddress("10.0.0.1")!)])
    }

    @Test func skipsWhatCannotBeAName() {
        #expect(parse("") == "skip:\(SkipReason.empty)")
        #expect(parse("   ") == "skip:\(SkipReason.empty)")
        #expect(parse("com") == "skip:\(SkipReason.singleLabel)")
        #expect(parse("*.com") == "skip:\(SkipReason.singleLabel)")
        #expect(parse("localhost") == "skip:\(SkipReason.singleLabel)")
        #expect(parse("example.com:http") == "skip:\(SkipReason.badPort)")
        #expect(parse("example.com:0") == "skip:\(SkipReason.badPort)")
        #expect(parse("a..com") == "skip:\(SkipReason.invalid(.emptyLabel))")
        #expect(parse("*.*.example.com") == "skip:\(SkipReason.invalid(.invalidCharacter("*")))")
        #expect(parse("exa mple.com") == "skip:\(SkipReason.invalid(.invalidCharacter(" ")))")
    }
}
