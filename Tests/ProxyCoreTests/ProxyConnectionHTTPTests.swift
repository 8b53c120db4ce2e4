import Bytes
import DomainMatch
import Policy
import Testing

@testable import ProxyCore

/// The state machine's plain-HTTP path (docs/proxy.md#plain-http), the PAC file (docs/proxy.md#the-pac-file) and bad input
/// (docs/proxy.md#bad-input-and-limits), driven by hand with manual time.
@Suite struct ProxyConnectionHTTPTests {
    let fixture = ProxyFixture()
    let second: UInt64 = 1_000_000_000
    let origin = Endpoint(.v4(0xC000_0207), port: 80)

    /// A connection with the request `request` forwarded to a fresh origin connection.
    private func forwarded(_ request: String) -> ProxyConnection {
        var connection = fixture.connection()
        #expect(connection.receive(request, fixture.env()).count == 1)
        _ = connection.lookupFinished(.addresses([IPAddress("192.0.2.7")!]), fixture.env())
        #expect(connection.connected(fixture.env()) == [])
        return connection
    }

    @Test func anAllowedRequestIsForwardedAndItsResponsePassedBack() {
        var connection = forwarded(
            "GET http://example.org/page HTTP/1.1\r\nHost: wrong.example\r\nProxy-Connection: keep-alive\r\n\r\n")
        #expect(
            connection.takeUpstreamOutput() == "GET /page HTTP/1.1\r\nHost: example.org\r\nVia: 1.1 phosra-gate\r\n\r\n"
        )
        #expect(connection.wantsUpstreamBytes)
        #expect(
            connection.receiveFromOrigin(
                "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nKeep-Alive: timeout=5\r\n\r\nhel",
                fixture.env()) == [])
        #expect(
            connection.takeClientOutput()
                == "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nVia: 1.1 phosra-gate\r\nConnection: keep-alive\r\n\r\nhel")
        #expect(connection.receiveFromOrigin("lo", fixture.env()) == [])
        #expect(connection.takeClientOutput() == "lo")
        #expect(connection.state == .readingHead, "keep-alive: the next request")
        #expect(connection.deadline == second + ProxyLimits.keepAliveIdle)
    }

    /// RFC 9112 §6.3 rule 3: Transfer-Encoding wins over Content-Length, which is not passed
    /// on; an origin that framed a response both ways is not trusted with the next request.
    @Test func aResponseFramedTwiceIsReadChunkedAndItsOriginNotReused() {
        var connection = forwarded("GET http://example.org/ HTTP/1.1\r\n\r\n")
        _ = connection.takeUpstreamOutput()
        let actions = connection.receiveFromOrigin(
            "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
            fixture.env())
        #expect(
            connection.takeClientOutput()
                == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nVia: 1.1 phosra-gate\r\nConnection: keep-alive\r\n\r\n"
                + "2\r\nok\r\n0\r\n\r\n")
        #expect(actions.contains(.dropUpstream))
        #expect(connection.state == .readingHead, "the client's connection stays")
    }

    @Test func everyRequestOnAKeepAliveConnectionIsDecided() {
        var connection = forwarded("GET http://example.org/ HTTP/1.1\r\n\r\n")
        _ = connection.takeUpstreamOutput()
        _ = connection.receiveFromOrigin("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", fixture.env())
        _ = connection.takeClientOutput()
        // The second request, to a blocked host: the block page, a hit, and the connection stays.
        let actions = connection.receive("GET http://www.reddit.com/r/all HTTP/1.1\r\n\r\n", fixture.env())
        #expect(actions.hits.first?.reasonText == "blocked_domain:reddit.com")
        let page = connection.takeClientOutput()
        #expect(page.hasPrefix("HTTP/1.1 403 Forbidden\r\nContent-Type: text/html; charset=utf-8\r\n"))
        #expect(page.contains("X-Phosra-Block: blocked_domain:reddit.com\r\n"))
        #expect(page.contains("<p class=\"site\">www.reddit.com</p>"))
        #expect(page.contains("A parent has blocked this site."))
        #expect(page.contains("test-gateway"))
        #expect(!page.contains("Connection: close"))
        #expect(connection.state == .readingHead)
        // The third, to the first origin again: the kept connection, no lookup.
        #expect(connection.receive("GET http://example.org/again HTTP/1.1\r\n\r\n", fixture.env()) == [])
        #expect(connection.takeUpstreamOutput().hasPrefix("GET /again HTTP/1.1\r\n"))
    }

    @Test func pipelinedRequestsWaitForTheirTurn() {
        var connection = forwarded(
            "GET http://example.org/1 HTTP/1.1\r\n\r\nGET http://www.reddit.com/ HTTP/1.1\r\n\r\n")
        #expect(connection.takeUpstreamOutput().hasPrefix("GET /1 HTTP/1.1"))
        #expect(!connection.wantsClientBytes)
        let actions = connection.receiveFromOrigin("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", fixture.env())
        #expect(actions.hits.first?.name == "www.reddit.com", "the second is decided once the first is answered")
        let output = connection.takeClientOutput()
        #expect(output.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(output.contains("ok HTTP/1.1 403") || output.contains("okHTTP/1.1 403 Forbidden"))
    }

    @Test func bodiesPassInBothDirectionsChunkedOrNot() {
        var connection = forwarded(
            "POST http://example.org/up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
        #expect(connection.takeUpstreamOutput().hasSuffix("Via: 1.1 phosra-gate\r\n\r\n3\r\nabc\r\n"))
        #expect(connection.wantsClientBytes)
        #expect(connection.receive("0\r\n\r\n", fixture.env()) == [])
        #expect(connection.takeUpstreamOutput() == "0\r\n\r\n")
        #expect(!connection.wantsClientBytes, "the request is complete")
        _ = connection.receiveFromOrigin(
            "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", fixture.env())
        #expect(connection.takeClientOutput().hasSuffix("\r\n\r\n2\r\nok\r\n0\r\n\r\n"))
        #expect(connection.state == .readingHead)
    }

    /// RFC 9112 §7.1: an HTTP/1.0 client cannot read chunked. It gets the chunks' content,
    /// without `Transfer-Encoding` and ended by the close, even when it asked for keep-alive.
    @Test func aChunkedResponseToAnHTTP10ClientIsDechunkedAndEndedByClosing() {
        var connection = forwarded("GET http://example.org/ HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(connection.takeUpstreamOutput().hasPrefix("GET / HTTP/1.1\r\n"))
        _ = connection.receiveFromOrigin(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Kept: 1\r\n\r\n3;ext=1\r\nabc\r\n",
            fixture.env())
        let head = connection.takeClientOutput()
        #expect(head == "HTTP/1.1 200 OK\r\nX-Kept: 1\r\nVia: 1.1 phosra-gate\r\nConnection: close\r\n\r\nabc")
        _ = connection.receiveFromOrigin("A\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n", fixture.env())
        #expect(connection.takeClientOutput() == "0123456789")
        #expect(connection.state == .closing)
    }

    @Test func aResponseWithoutALengthEndsTheConnection() {
        var connection = forwarded("GET http://example.org/ HTTP/1.1\r\n\r\n")
        _ = connection.receiveFromOrigin("HTTP/1.0 200 OK\r\n\r\nstream", fixture.env())
        #expect(connection.takeClientOutput().contains("Connection: close\r\n\r\nstream"))
        let actions = connection.upstreamClosed(fixture.env())
        #expect(actions.contains(.dropUpstream))
        #expect(connection.state == .closing)
    }

    @Test func aKeptConnectionTheOriginClosedIsRetriedOnce() throws {
        var connection = forwarded("GET http://example.org/ HTTP/1.1\r\n\r\n")
        _ = connection.receiveFromOrigin("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", fixture.env())
        _ = connection.receive("GET http://example.org/2 HTTP/1.1\r\n\r\n", fixture.env())
        _ = connection.takeUpstreamOutput()
        let actions = connection.upstreamClosed(fixture.env())
        #expect(
            actions == [
                .dropUpstream,
                .lookup(HostQuery(name: try QueryName.parse("example.org"), profile: fixture.profile(), inspect: true)),
            ])
        _ = connection.lookupFinished(.addresses([IPAddress("192.0.2.7")!]), fixture.env())
        _ = connection.connected(fixture.env())
        #expect(connection.takeUpstreamOutput().hasPrefix("GET /2 HTTP/1.1\r\n"))
    }

    @Test func theBlockPageForACutoffSaysWhenItEnds() {
        let timed = ProxyFixture(policy: ProxyFixture.policy(downtime: ("11:00", "12:30")))
        var connection = timed.connection()
        _ = connection.receive("GET http://example.org/ HTTP/1.1\r\n\r\n", timed.env())
        let page = connection.takeClientOutput()
        #expect(page.contains("It is downtime"))
        #expect(page.contains("<tr><th>Allowed again</th><td>Mon 2026-11-30 12:30</td></tr>"))
        #expect(page.contains("<tr><th>Time</th><td>Mon 2026-11-30 12:00 (UTC)</td></tr>"))
    }

    /// An exchange in progress is re-decided like a tunnel
    /// (docs/proxy.md#open-connections-follow-the-policy): a cutoff that begins or a policy
    /// that now blocks its host aborts it with a hit, so the rest of a download never
    /// arrives; a connection between requests has nothing to re-decide.
    @Test func anExchangeInProgressIsAbortedWhenACutoffBeginsOrAPolicyBlocksItsHost() {
        let timed = ProxyFixture(policy: ProxyFixture.policy(downtime: ("12:01", "13:00")))
        var connection = timed.connection()
        _ = connection.receive("GET http://example.org/big HTTP/1.1\r\n\r\n", timed.env())
        _ = connection.lookupFinished(.addresses([IPAddress("192.0.2.7")!]), timed.env())
        _ = connection.connected(timed.env())
        _ = connection.receiveFromOrigin("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nxx", timed.env())
        #expect(connection.tick(timed.env(), lastActivity: second) == [], "allowed before the window")
        let actions = connection.tick(timed.env(wallClock: ProxyFixture.noon + 60), lastActivity: second)
        #expect(actions.last == .abort)
        #expect(actions.hits.map(\.reasonText) == ["downtime"])
        #expect(actions.hits.first?.name == "example.org")
        #expect(connection.state == .closed)

        var open = forwarded("GET http://example.org/big HTTP/1.1\r\n\r\n")
        let stricter = ProxyFixture(policy: ProxyFixture.policy(blocked: ["example.org"]))
        let blocked = open.tick(stricter.env(), lastActivity: second)
        #expect(blocked.last == .abort)
        #expect(blocked.hits.map(\.reasonText) == ["blocked_domain:example.org"])

        // Finished, the connection waits for its next request: that one will be decided.
        var done = forwarded("GET http://example.org/ HTTP/1.1\r\n\r\n")
        _ = done.receiveFromOrigin("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", fixture.env())
        #expect(done.state == .readingHead)
        #expect(done.tick(stricter.env(), lastActivity: second) == [])
    }

    /// A host that safe search now rewrites elsewhere ends the exchange without a hit; a
    /// host rewritten before and still to the same target goes on.
    @Test func anExchangeWhoseHostIsNowRewrittenElsewhereIsAbortedWithoutAHit() {
        let unsafe = ProxyFixture(policy: ProxyFixture.policy(safeSearch: false))
        var connection = unsafe.connection()
        _ = connection.receive("GET http://www.google.com/search HTTP/1.1\r\n\r\n", unsafe.env())
        _ = connection.lookupFinished(.addresses([IPAddress("192.0.2.7")!]), unsafe.env())
        _ = connection.connected(unsafe.env())
        #expect(connection.tick(unsafe.env(), lastActivity: second) == [])
        #expect(connection.tick(fixture.env(), lastActivity: second) == [.abort])

        var rewritten = fixture.connection()
        _ = rewritten.receive("GET http://www.google.com/search HTTP/1.1\r\n\r\n", fixture.env())
        _ = rewritten.lookupFinished(.addresses([IPAddress("192.0.2.7")!]), fixture.env())
        _ = rewritten.connected(fixture.env())
        #expect(rewritten.tick(fixture.env(), lastActivity: second) == [])
    }

    /// Plain HTTP the firewall redirected to port 80 follows the policy on its `Host`.
    @Test func aRedirectedExchangeFollowsThePolicyOnItsHost() {
        var connection = ProxyConnection.redirected(
            client: ProxyFixture.client, arrivedOn: ProxyFixture.arrivedOn,
            destination: Endpoint(.v4(0xCB00_710A), port: 80), now: second)
        _ = connection.receive("GET /big HTTP/1.1\r\nHost: news.example\r\n\r\n", fixture.env())
        _ = connection.lookupFinished(.addresses([IPAddress("203.0.113.10")!]), fixture.env())
        _ = connection.connected(fixture.env())
        guard case .exchanging = connection.state else {
            Issue.record("not exchanging: \(connection.state)")
            return
        }
        #expect(connection.tick(fixture.env(), lastActivity: second) == [])
        let stricter = ProxyFixture(policy: ProxyFixture.policy(blocked: ["news.example"]))
        let actions = connection.tick(stricter.env(), lastActivity: second)
        #expect(actions.last == .abort)
        #expect(actions.hits.map(\.reasonText) == ["blocked_domain:news.example"])
        #expect(actions.hits.first?.source == .transparent)
    }

    @Test func thePACFileAndOtherDirectRequests() {
        var connection = fixture.connection()
        #expect(
            connection.receive(
                "GET /proxy.pac HTTP/1.1\r\nHost: 127.0.0.1:3128\r\n\r\nGET /wpad.dat HTTP/1.1\r\nHost: 127.0.0.1:3128\r\n\r\n",
                fixture.env()) == [])
        let output = connection.takeClientOutput()
        #expect(output.components(separatedBy: "PROXY 127.0.0.1:3128").count == 3, "both answered, in order")
        #expect(connection.state == .readingHead)
        _ = connection.receive("GET /other HTTP/1.1\r\nHost: proxy\r\nConnection: close\r\n\r\n", fixture.env())
        #expect(connection.takeClientOutput().hasPrefix("HTTP/1.1 404 Not Found\r\n"))
        #expect(connection.state == .closing)

        // RFC 9112 §3.2: HTTP/1.1 without Host is 400; HTTP/1.0 may leave it out.
        var hostless = fixture.connection()
        _ = hostless.receive("GET /proxy.pac HTTP/1.1\r\n\r\n", fixture.env())
        #expect(hostless.takeClientOutput().hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        var old = fixture.connection()
        _ = old.receive("GET /proxy.pac HTTP/1.0\r\n\r\n", fixture.env())
        #expect(old.takeClientOutput().hasPrefix("HTTP/1.1 200 OK\r\n"))
    }

    /// RFC 9110 §7.6.2: OPTIONS or TRACE with Max-Forwards 0 is answered by the proxy
    /// (TRACE echoes the request without its credentials); with more hops it goes on, one
    /// fewer.
    @Test func maxForwardsZeroIsAnsweredHereAndOtherwiseDecremented() {
        var options = fixture.connection()
        let asked = options.receive(
            "OPTIONS http://example.org/ HTTP/1.1\r\nHost: example.org\r\nMax-Forwards: 0\r\n\r\n", fixture.env())
        #expect(asked.isEmpty, "no lookup, no origin")
        let allowed = options.takeClientOutput()
        #expect(allowed.hasPrefix("HTTP/1.1 200 OK\r\n") && allowed.contains("Allow: GET, HEAD, POST"), "\(allowed)")

        var trace = fixture.connection()
        _ = trace.receive(
            "TRACE http://example.org/t HTTP/1.1\r\nHost: example.org\r\nMax-Forwards: 0\r\nX-Probe: 1\r\n"
                + "Cookie: secret=1\r\nAuthorization: Basic eDp5\r\n\r\n", fixture.env())
        let echoed = trace.takeClientOutput()
        #expect(echoed.contains("Content-Type: message/http\r\n"), "\(echoed)")
        #expect(echoed.contains("TRACE http://example.org/t HTTP/1.1\r\n") && echoed.contains("X-Probe: 1\r\n"))
        #expect(!echoed.contains("secret") && !echoed.contains("eDp5"), "\(echoed)")

        var onward = forwarded("TRACE http://example.org/t HTTP/1.1\r\nHost: example.org\r\nMax-Forwards: 3\r\n\r\n")
        let sent = onward.takeUpstreamOutput()
        #expect(sent.contains("Max-Forwards: 2\r\n") && !sent.contains("Max-Forwards: 3"), "\(sent)")
    }

    /// An HTTP/0.9 request line waits for an answer without ending a head: refused at once,
    /// not after the head timeout.
    @Test func anHTTP09RequestLineIsRefusedAtOnce() {
        var connection = fixture.connection()
        _ = connection.receive("GET /\r\n", fixture.env())
        #expect(connection.takeClientOutput().hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(connection.state == .closing)
        var version = fixture.connection()
        _ = version.receive("GET http://example.org/ HTTP/2.0\r\n", fixture.env())
        #expect(version.takeClientOutput().hasPrefix("HTTP/1.1 505 HTTP Version Not Supported\r\n"))
    }

    /// A chunked request body whose lines end in a bare LF is refused (400), never passed
    /// to the origin as it came: a server that read it differently would see a second
    /// request inside it.
    @Test func aChunkedRequestBodyWithBareLineFeedsIsRefused() {
        var connection = forwarded(
            "POST http://example.org/ HTTP/1.1\r\nHost: example.org\r\nTransfer-Encoding: chunked\r\n\r\n")
        _ = connection.takeUpstreamOutput()
        let actions = connection.receive("5\nhello\n0\n\n", fixture.env())
        #expect(connection.takeClientOutput().hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        #expect(actions.contains(.dropUpstream))
        #expect(!connection.takeUpstreamOutput().contains("hello"), "nothing of it reached the origin")

        var strict = forwarded(
            "POST http://example.org/ HTTP/1.1\r\nHost: example.org\r\nTransfer-Encoding: chunked\r\n\r\n")
        _ = strict.takeUpstreamOutput()
        _ = strict.receive("5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n", fixture.env())
        #expect(strict.takeUpstreamOutput() == "5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n")
    }

    @Test func oversizedHeadsAre431() {
        var connection = fixture.connection()
        let long = "GET http://example.org/ HTTP/1.1\r\nX-Filler: " + String(repeating: "a", count: 16_400)
        #expect(connection.receive(long, fixture.env()).contains(.dropUpstream))
        #expect(connection.takeClientOutput().hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))
        #expect(connection.state == .closing)
    }

    @Test func malformedRequestsAre400AndLoops508() {
        for request in [
            "GARBAGE\r\n\r\n", "GET http://exa mple/ HTTP/1.1\r\n\r\n", "CONNECT example.org HTTP/1.1\r\n\r\n",
            "GET https://example.org/ HTTP/1.1\r\n\r\n", "POST http://x.org/ HTTP/1.1\r\nContent-Length: x\r\n\r\n",
        ] {
            var connection = fixture.connection()
            _ = connection.receive(request, fixture.env())
            #expect(connection.takeClientOutput().hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(request)")
        }
        var loop = fixture.connection()
        _ = loop.receive("GET http://example.org/ HTTP/1.1\r\nVia: 1.1 phosra-gate\r\n\r\n", fixture.env())
        #expect(loop.takeClientOutput().hasPrefix("HTTP/1.1 508 Loop Detected\r\n"))
    }

    @Test func aHeadNotCompleteWithin10SecondsClosesTheConnection() {
        var connection = fixture.connection()
        #expect(connection.receive("GET http://example.org/ HTTP/1.1\r\nX-Slow: ", fixture.env(now: 9 * second)) == [])
        #expect(connection.deadlinePassed(fixture.env(now: 10 * second)) == [])
        #expect(connection.deadlinePassed(fixture.env(now: 11 * second)) == [.close])
        #expect(connection.state == .closed)
    }

    @Test func theNextHeadOnAKeptConnectionGetsItsOwn10Seconds() {
        var connection = fixture.connection()
        _ = connection.receive("GET /proxy.pac HTTP/1.1\r\nHost: proxy\r\n\r\n", fixture.env(now: 2 * second))
        #expect(connection.deadline == 2 * second + ProxyLimits.keepAliveIdle)
        _ = connection.receive("GET http://exam", fixture.env(now: 30 * second))
        #expect(connection.deadline == 30 * second + ProxyLimits.headTimeout)
    }

    @Test func aRefusedClientGetsItsResponseThenTheClose() {
        var connection = ProxyConnection.refused(
            client: ProxyFixture.client, arrivedOn: ProxyFixture.arrivedOn, status: 403,
            message: "client may not use this proxy", now: second)
        #expect(connection.takeClientOutput().hasPrefix("HTTP/1.1 403 Forbidden\r\n"))
        #expect(connection.state == .closing)
        #expect(connection.receive("CONNECT x:443 HTTP/1.1\r\n\r\n", fixture.env()) == [], "input is discarded")
        #expect(connection.clientClosed(fixture.env()) == [.close])
    }
}
