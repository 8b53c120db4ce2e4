import Base64
import HTTPClient
import Store
import Testing

@testable import Notify

/// The two shapes an event is sent in: ntfy's publish (body and headers) and one JSON
/// object; text from outside never forges a header or a line.
@Suite struct NoticeFormatTests {
    let request = RequestRow(
        id: 42, profile: "alice", device: "aa:bb:cc:dd:ee:01", address: "192.168.1.20", kind: "site",
        target: "youtube.com", note: "for <b>homework</b>\r\nTitle: forged", askedAt: 1_772_323_200,
        expiresAt: 1_772_409_600)

    var ask: Notice { Notices.ask(request, what: "Open youtube.com", page: "https://gate.lan:8443/") }

    @Test func theJSONObjectHasTheDocumentedFieldsAndReadsBack() throws {
        let json = ask.json()
        for key in [
            "\"event\":\"ask\"", "\"id\":\"ask:42\"", "\"time\":1772323200", "\"profile\":\"alice\"",
            "\"device\":\"aa:bb:cc:dd:ee:01\"", "\"title\":\"alice asks: Open youtube.com\"",
            "\"click\":\"https://gate.lan:8443/#request-42\"", "\"priority\":4", "\"tags\":[\"raising_hand\"]",
            "\"request\":\"42\"", "\"kind\":\"site\"", "\"target\":\"youtube.com\"",
        ] {
            #expect(json.contains(key), "\(key) in \(json)")
        }
        #expect(Notice(json: json) == ask)
        #expect(Notice(json: "{\"event\":\"nope\"}") == nil)
        #expect(Notice(json: "not json") == nil)
    }

    @Test func aNoteKeepsItsTextButLosesItsControlCharacters() {
        // The HTML stays text (a receiver shows it as typed); CR becomes a space, so the
        // forged "Title:" is part of the message, never a header.
        #expect(ask.message.hasPrefix("“for <b>homework</b> \nTitle: forged”"))
        #expect(Notice.clean("a\u{202E}b\u{0}c\u{85}d", limit: 10) == "ab c d")
        #expect(Notice.clean(String(repeating: "x", count: 500), limit: 200).count == 200)
    }

    @Test func ntfyGetsTheMessageAsBodyAndTheRestAsHeaders() throws {
        let target = NotifyTarget(url: try HTTPURL("https://ntfy.example/phosra"), format: .ntfy, token: "tk_secret")
        let sent = target.request(for: ask)
        #expect(sent.method == "POST")
        #expect(sent.url.description == "https://ntfy.example/phosra")
        let headers = Dictionary(sent.headers, uniquingKeysWith: { first, _ in first })
        #expect(headers["Title"] == "alice asks: Open youtube.com")
        #expect(headers["Priority"] == "4")
        #expect(headers["Tags"] == "raising_hand")
        #expect(headers["Click"] == "https://gate.lan:8443/#request-42")
        #expect(headers["Authorization"] == "Bearer tk_secret")
        #expect(String(decoding: sent.body, as: UTF8.self) == ask.message)
        for (_, value) in sent.headers { #expect(!value.contains("\r") && !value.contains("\n")) }
    }

    @Test func aTitleOutsideASCIIIsAnEncodedWord() throws {
        var notice = ask
        notice.title = "Zoë asks: 30 more minutes\r\nX-Evil: 1"
        let target = NotifyTarget(url: try HTTPURL("http://127.0.0.1:9/t"), format: .ntfy, token: nil)
        let title = target.request(for: notice).headers.first { $0.0 == "Title" }?.1 ?? ""
        #expect(title.hasPrefix("=?UTF-8?B?") && title.hasSuffix("?="))
        let encoded = title.dropFirst("=?UTF-8?B?".count).dropLast(2)
        let decoded = Base64.decode(Array(encoded.utf8)).map { String(decoding: $0, as: UTF8.self) }
        #expect(decoded == "Zoë asks: 30 more minutes  X-Evil: 1")
        #expect(!target.request(for: notice).headers.contains { $0.0 == "Authorization" })
    }

    @Test func jsonPostsTheObject() throws {
        let target = NotifyTarget(url: try HTTPURL("http://127.0.0.1:9/api/webhook/x"), format: .json, token: "")
        let sent = target.request(for: ask)
        #expect(sent.headers.contains { $0 == ("Content-Type", "application/json") })
        #expect(!sent.headers.contains { $0.0 == "Authorization" })
        #expect(Notice(json: String(decoding: sent.body, as: UTF8.self)) == ask)
    }

    @Test func eachEventHasAStableId() {
        let sighting = ClientSighting(
            profile: "default", client: "aa:bb:cc:dd:ee:02", address: "192.168.1.30", mac: "aa:bb:cc:dd:ee:02",
            firstSeen: 100, lastSeen: 100, queries: 3)
        #expect(Notices.newDevice(sighting, name: "Zoë's tablet", page: nil).id == "device:aa:bb:cc:dd:ee:02")
        #expect(
            Notices.newDevice(sighting, name: "Zoë's tablet", page: nil).title
                == "New device “Zoë's tablet” on the network")
        let spent = Notices.budgetSpent(
            profile: "alice", app: "tiktok", appName: "TikTok", used: 30, limit: 30, day: 20_500, now: 5, page: nil)
        #expect(spent.id == "budget:alice:tiktok:20500" && spent.title == "alice: today's TikTok time is used up")
        let online = Notices.budgetSpent(
            profile: "alice", app: nil, appName: nil, used: 120, limit: 120, day: 20_500, now: 5, page: nil)
        #expect(online.id == "budget:alice:online:20500" && online.title == "alice: today's time online is used up")
    }
}
