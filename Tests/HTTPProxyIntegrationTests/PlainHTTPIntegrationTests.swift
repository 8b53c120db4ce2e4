import Foundation
import TestSupport
import Testing

/// Plain HTTP through the proxy (docs/proxy.md#plain-http) and the PAC file (docs/proxy.md#the-pac-file), with real curl.
@Suite(.serialized, .blocking) struct PlainHTTPIntegrationTests {
    let fixture: ProxyFixture

    init() throws { fixture = try ProxyFixture() }

    @Test func anAllowedRequestIsForwardedWithoutHopByHopFieldsAndWithVia() throws {
        let gate = try fixture.start()
        let result = try fixture.curl([
            "-H", "Connection: X-Private", "-H", "X-Private: secret", "-H", "Keep-Alive: 5",
            "-H", "Host: elsewhere.example", "http://origin.test:\(fixture.origin.port)/a?b=c",
        ])
        #expect(result.status == 200, "\(result)")
        #expect(result.body.hasPrefix("origin saw GET /a?b=c\n"), "origin-form to the origin")
        #expect(result.body.contains("Host: origin.test:\(fixture.origin.port)\n"), "the absolute URI wins over Host")
        #expect(result.body.contains("Via: 1.1 phosra-gate\n"))
        #expect(!result.body.contains("X-Private"), "fields named in Connection are hop-by-hop")
        #expect(!result.body.contains("Keep-Alive"))
        #expect(!result.body.contains("Proxy-Connection"))
        #expect(result.output.contains("\r\nVia: 1.1 phosra-gate\r\n"), "Via on the response too")
        _ = gate
    }

    /// An HTTP/1.0 client cannot read chunked (RFC 9112 §7.1): curl --http1.0 gets the
    /// chunks' content, ended by the close; an HTTP/1.1 client gets the chunks as they came.
    @Test func aChunkedResponseReachesAnHTTP10ClientDechunked() throws {
        let chunked = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n".utf8)
        let origin = try TestHTTPServer { _ in
            .rawParts(
                [chunked, Array("5\r\nworld\r\n0\r\n\r\n".utf8)],
                pause: .milliseconds(50), close: false)
        }
        let gate = try fixture.start(httpPorts: [origin.port])
        let old = try fixture.curl(["--http1.0", "http://origin.test:\(origin.port)/"])
        #expect(old.exitCode == 0, "\(old)")
        #expect(old.body == "hello world")
        #expect(!old.output.lowercased().contains("transfer-encoding"))
        #expect(old.output.contains("\r\nConnection: close\r\n"))
        let new = try fixture.curl(["--raw", "http://origin.test:\(origin.port)/"])
        #expect(new.output.contains("\r\nTransfer-Encoding: chunked\r\n"), "\(new)")
        #expect(new.output.hasSuffix("\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n"))
        _ = gate
    }

    @Test func aSecondKeepAliveRequestToABlockedHostIsRefusedAlthoughTheFirstWasAllowed() throws {
        let gate = try fixture.start()
        let client = try fixture.client()
        client.send("GET http://origin.test:\(fixture.origin.port)/first HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let first = client.readResponse()
        #expect(first.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(first)")
        #expect(first.contains("origin saw GET /first"))
        client.send("GET http://www.adult.example/second HTTP/1.1\r\nHost: www.adult.example\r\n\r\n")
        let second = client.readResponse()
        #expect(second.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), "\(second)")
        #expect(second.contains("X-Phosra-Block: category:adult\r\n"))
        #expect(second.contains("This site is in a category that is blocked: adult content."))
        client.send("GET http://origin.test:\(fixture.origin.port)/third HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        #expect(client.readResponse().contains("origin saw GET /third"), "the connection stays usable")
        #expect(fixture.origin.connectionsAccepted == 1, "and the origin connection is reused")

        // curl with two URLs on one connection says the same.
        let both = try fixture.curl(["http://origin.test:\(fixture.origin.port)/one", "http://www.reddit.com/two"])
        #expect(both.output.contains("origin saw GET /one"), "\(both)")
        #expect(both.output.contains("X-Phosra-Block: blocked_domain:reddit.com"))
        #expect(both.status == 403)
        _ = gate
    }

    @Test func theBlockPageNamesTheSiteTheReasonTheTimeAndTheGateway() throws {
        let gate = try fixture.start(ProxyFixture.policy(), ["--gateway-name", "Living room <gateway>"])
        let result = try fixture.curl(["http://www.reddit.com/r/<script>alert(1)</script>"])
        #expect(result.status == 403, "\(result)")
        #expect(result.output.contains("Content-Type: text/html; charset=utf-8\r\n"))
        let page = result.body
        #expect(page.contains("<p class=\"site\">www.reddit.com</p>"))
        #expect(page.contains("A parent has blocked this site."))
        #expect(page.contains("<code>blocked_domain:reddit.com</code>"))
        #expect(page.contains("<tr><th>Time</th><td>"))
        #expect(page.contains("Living room &lt;gateway&gt;"))
        #expect(page.contains("/r/&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!page.contains("<script>"))
        _ = gate
    }

    @Test func theBlockPageInDowntimeSaysWhenItEnds() throws {
        let gate = try fixture.start(
            ProxyFixture.policy(screenTime: PolicyDocuments.downtime("11:57", "12:03")),
            wallClock: PolicyDocuments.noon)
        let result = try fixture.curl(["http://origin.test:\(fixture.origin.port)/"])
        #expect(result.status == 403, "\(result)")
        #expect(result.output.contains("X-Phosra-Block: downtime\r\n"))
        #expect(result.body.contains("It is downtime"))
        #expect(
            result.body.contains("<tr><th>Allowed again</th><td>") && result.body.contains("12:03"), "\(result.body)")
        #expect(fixture.origin.connectionsAccepted == 0)
        _ = gate
    }

    @Test func thePACFileNamesTheAddressTheRequestArrivedOn() throws {
        let gate = try fixture.start()
        for path in ["/proxy.pac", "/wpad.dat"] {
            let result = try Curl.run(["http://127.0.0.1:\(fixture.proxyPort)\(path)"])
            #expect(result.status == 200, "\(result)")
            #expect(result.output.contains("Content-Type: application/x-ns-proxy-autoconfig\r\n"))
            #expect(
                result.body
                    == "function FindProxyForURL(url, host) { return \"PROXY 127.0.0.1:\(fixture.proxyPort)\"; }\n")
        }
        #expect(try Curl.run(["http://127.0.0.1:\(fixture.proxyPort)/other"]).status == 404)
        _ = gate
    }
}
