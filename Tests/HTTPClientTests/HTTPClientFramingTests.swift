import HTTPClient
import TestSupport
import Testing

/// Every way a response body can be delimited (RFC 9112 §6.3), against hand-made servers.
@Suite(.blocking) struct HTTPClientFramingTests {
    @Test func contentLengthBody() throws {
        let server = try rawServer(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{\"a\":\"bcd\"}\n")
        let response = try client().send(try get("\(server.origin)/x"))
        #expect(response.status == 200)
        #expect(response.reason == "OK")
        #expect(response.bodyText == "{\"a\":\"bcd\"}\n")
        #expect(response.header("content-type") == "application/json")
        #expect(response.header("CONTENT-LENGTH") == "12")
        #expect(response.header("X-Missing") == nil)
    }

    @Test func chunkedBodyWithExtensionsAndTrailersSplitAcrossWrites() throws {
        let parts = [
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhel", "lo\r\n", "1",
            "0\r\n, chunked world!\r\n",
            "0\r\nX-Trailer: yes\r\n", "\r\n",
        ]
        let server = try TestHTTPServer { _ in .rawParts(parts.map(bytes), pause: .milliseconds(5), close: false) }
        let http = client()
        let response = try http.send(try get("\(server.origin)/"))
        #expect(response.bodyText == "hello, chunked world!")
        // The connection stays usable after a chunked body.
        #expect(try http.send(try get("\(server.origin)/")).bodyText == "hello, chunked world!")
        #expect(http.connectionsOpened == 1)
    }

    @Test func closeDelimitedBodyEndsAtTheCloseAndIsNotReused() throws {
        let server = try rawServer("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", close: true)
        let http = client()
        #expect(try http.send(try get("\(server.origin)/")).bodyText == "until the end")
        #expect(try http.send(try get("\(server.origin)/")).bodyText == "until the end")
        #expect(http.connectionsOpened == 2)
    }

    @Test func notModifiedHasNoBodyAndKeepsTheConnection() throws {
        // Like Go: a 304 with neither Content-Length nor Transfer-Encoding, connection kept.
        let server = try TestHTTPServer { request in
            request.indexOnConnection == 1
                ? .raw(bytes("HTTP/1.1 304 Not Modified\r\nX-RateLimit-Remaining: 99\r\n\r\n"), close: false)
                : .raw(bytes("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), close: false)
        }
        let http = client()
        let first = try http.send(try get("\(server.origin)/"))
        #expect(first.status == 304 && first.body.isEmpty && first.header("X-RateLimit-Remaining") == "99")
        #expect(try http.send(try get("\(server.origin)/")).bodyText == "ok")
        #expect(http.connectionsOpened == 1)
    }

    @Test func noContentAndHEADHaveNoBodyEvenWithAContentLength() throws {
        let server = try TestHTTPServer { request in
            request.method == "HEAD"
                ? .raw(bytes("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"), close: false)
                : .raw(bytes("HTTP/1.1 204 No Content\r\n\r\n"), close: false)
        }
        let http = client()
        let head = try http.send(HTTPRequest(method: "HEAD", url: try HTTPURL(server.origin)))
        #expect(head.status == 200 && head.body.isEmpty && head.header("Content-Length") == "1000")
        let deleted = try http.send(HTTPRequest(method: "DELETE", url: try HTTPURL("\(server.origin)/devices/1")))
        #expect(deleted.status == 204 && deleted.body.isEmpty)
        #expect(http.connectionsOpened == 1)
    }

    @Test func interimContinueIsSkipped() throws {
        let server = try rawServer("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 2\r\n\r\nok")
        let response = try client().send(
            HTTPRequest(method: "POST", url: try HTTPURL(server.origin), body: bytes("{}")))
        #expect(response.status == 202 && response.bodyText == "ok")
    }

    @Test func http10ResponseWithoutKeepAliveClosesTheConnection() throws {
        let server = try rawServer("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
        let http = client()
        #expect(try http.send(try get(server.origin)).bodyText == "ok")
        #expect(try http.send(try get(server.origin)).bodyText == "ok")
        #expect(http.connectionsOpened == 2)
    }

    @Test func theRequestCarriesTheClientsHeadersAndTheCallersOnce() throws {
        let seen = Recorder<TestHTTPServer.Request>()
        let server = try TestHTTPServer { request in
            seen.append(request)
            return .respond(.init(status: 200, text: "ok"))
        }
        let url = try HTTPURL("\(server.origin)/api/v1/device/report")
        _ = try client().send(
            HTTPRequest(
                method: "POST", url: url,
                headers: [
                    ("X-Device-Key", "k"), ("Content-Length", "999"), ("Host", "evil"),
                    ("Connection", "close"), ("Content-Type", "application/json"),
                ],
                body: bytes("{\"a\":1}")))
        let request = try #require(seen.values.first)
        #expect(request.method == "POST" && request.target == "/api/v1/device/report" && request.version == "HTTP/1.1")
        #expect(
            request.headers.map(\.0) == [
                "Host", "User-Agent", "X-Device-Key", "Content-Type", "Accept-Encoding",
                "Connection", "Content-Length",
            ])
        #expect(request.header("Host") == "127.0.0.1:\(server.port)")
        #expect(request.header("User-Agent") == "phosra-gate-test/1.0")
        #expect(request.header("Content-Length") == "7")
        #expect(request.header("Connection") == "keep-alive")
        #expect(request.header("Accept-Encoding") == "identity")
        #expect(request.body == bytes("{\"a\":1}"))
        // An empty POST still says Content-Length: 0; a GET does not.
        _ = try client().send(HTTPRequest(method: "POST", url: url))
        _ = try client().send(HTTPRequest(method: "GET", url: url, headers: [("User-Agent", "custom")]))
        #expect(seen.values[1].header("Content-Length") == "0")
        #expect(seen.values[2].header("Content-Length") == nil)
        #expect(seen.values[2].headers.filter { $0.0 == "User-Agent" }.map(\.1) == ["custom"])
    }
}
