import EventLoop
import Glibc
import HTTPClient
import SystemIO
import TestSupport
import Testing

/// Connections: keep-alive reuse, stale connections, refusals and deadlines.
@Suite(.blocking) struct HTTPClientConnectionTests {
    private static let ok = TestHTTPServer.Reply.respond(.init(status: 200, text: "ok"))

    @Test func keepAliveReusesOneConnectionPerOrigin() throws {
        let server = try TestHTTPServer { _ in Self.ok }
        let other = try TestHTTPServer { _ in Self.ok }
        let http = client()
        for _ in 0..<3 { #expect(try http.send(try get("\(server.origin)/a")).bodyText == "ok") }
        #expect(try http.send(try get("\(other.origin)/b")).bodyText == "ok")
        #expect(try http.send(try get("\(server.origin)/c")).bodyText == "ok")
        #expect(http.connectionsOpened == 2)
        #expect(server.connectionsAccepted == 1 && other.connectionsAccepted == 1)
        http.closeIdleConnections()
        _ = try http.send(try get(server.origin))
        #expect(http.connectionsOpened == 3)
    }

    @Test func aResponseWithConnectionCloseIsNotReused() throws {
        let server = try TestHTTPServer { _ in
            .respond(.init(status: 200, headers: [("Connection", "close")], text: "ok"))
        }
        let http = client()
        _ = try http.send(try get(server.origin))
        _ = try http.send(try get(server.origin))
        #expect(http.connectionsOpened == 2)
    }

    @Test func aConnectionTheServerClosedWhileIdleIsNotUsed() throws {
        let server = try TestHTTPServer(idleTimeout: .milliseconds(100)) { _ in Self.ok }
        let http = client()
        _ = try http.send(try get(server.origin))
        #expect(waitUntil { server.openConnections == 0 }, "the server closed the idle connection")
        #expect(try http.send(try get(server.origin)).bodyText == "ok")
        #expect(http.connectionsOpened == 2)
    }

    /// The idle age is measured on the client's clock: a manual one, moved by hand.
    @Test func aConnectionIdleLongerThanTheIdleTimeoutIsNotReused() throws {
        let server = try TestHTTPServer { _ in Self.ok }
        let clock = ManualClock()
        let http = client(idleTimeout: .seconds(30), clock: clock)
        _ = try http.send(try get(server.origin))
        clock.advance(by: 29_000_000_000)
        _ = try http.send(try get(server.origin))
        #expect(http.connectionsOpened == 1, "idle 29 s: kept")
        clock.advance(by: 31_000_000_000)
        _ = try http.send(try get(server.origin))
        #expect(http.connectionsOpened == 2, "idle 31 s: retired")
        #expect(server.connectionsAccepted == 2)
    }

    @Test func aGETCaughtByAServerClosingAKeptConnectionIsSentAgainOnce() throws {
        // The second request on the first connection is dropped unanswered (the server
        // closed it just as we reused it); an idempotent request goes out once more.
        let server = try TestHTTPServer { request in
            request.connection == 1 && request.indexOnConnection == 2 ? .drop : Self.ok
        }
        let http = client()
        _ = try http.send(try get(server.origin))
        #expect(try http.send(try get(server.origin)).bodyText == "ok")
        #expect(http.connectionsOpened == 2)
    }

    @Test func aPOSTWhoseReplyWasLostIsNotSentTwice() throws {
        let seen = Recorder<String>()
        let server = try TestHTTPServer { request in
            seen.append(request.method)
            return request.connection == 1 && request.indexOnConnection == 2 ? .drop : Self.ok
        }
        let http = client()
        _ = try http.send(try get(server.origin))
        #expect(throws: HTTPError.closed) {
            try http.send(HTTPRequest(method: "POST", url: try HTTPURL(server.origin), body: bytes("{}")))
        }
        #expect(seen.values == ["GET", "POST"])
        #expect(try http.send(try get(server.origin)).bodyText == "ok")
    }

    @Test func aDropOnAFreshConnectionIsClosed() throws {
        let server = try TestHTTPServer { _ in .drop }
        #expect(throws: HTTPError.closed) { try client().send(try get(server.origin)) }
    }

    @Test func aRefusedConnectionSaysSoWithTheAddress() throws {
        let port = deadPort()
        #expect(throws: HTTPError.connect(SystemError("connect", errno: ECONNREFUSED, subject: "127.0.0.1:\(port)"))) {
            try client().send(try get("http://127.0.0.1:\(port)/"))
        }
    }

    @Test func aNameWithSeveralAddressesFallsBackToTheNextOne() throws {
        let server = try TestHTTPServer { _ in Self.ok }
        let resolver = HostResolver.fixed(["api.test": ["::1", "127.0.0.2", "127.0.0.1"]])
        let response = try client(resolver: resolver).send(try get("http://api.test:\(server.port)/"))
        #expect(response.bodyText == "ok")
    }

    @Test func anUnresolvableNameIsAResolveError() throws {
        #expect(throws: HTTPError.resolve(host: "nowhere.test", reason: "not in the fixed table")) {
            try client(resolver: .fixed([:])).send(try get("http://nowhere.test/"))
        }
    }

    @Test func localhostResolvesThroughTheSystem() throws {
        let server = try TestHTTPServer { _ in Self.ok }
        #expect(try client().send(try get("http://localhost:\(server.port)/")).bodyText == "ok")
    }

    @Test func aServerThatNeverAnswersTimesOut() throws {
        let server = try TestHTTPServer { _ in .hang }
        let http = client(requestTimeout: .milliseconds(300))
        let elapsed = milliseconds {
            #expect(throws: HTTPError.timeout(.response)) { try http.send(try get(server.origin)) }
        }
        #expect(elapsed >= 290 && elapsed < 2000)
    }

    /// The deadline is on the client's clock: once it has passed there, the next wait for
    /// bytes ends the request, however little real time went by. (The server moves the
    /// manual clock past the 30 s as it answers.)
    @Test func aServerThatStopsHalfwayTimesOutToo() throws {
        let clock = ManualClock()
        let server = try TestHTTPServer { _ in
            clock.advance(by: 31_000_000_000)
            return .raw(bytes("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"), close: false)
        }
        let elapsed = milliseconds {
            #expect(throws: HTTPError.timeout(.response)) {
                try client(requestTimeout: .seconds(30), clock: clock).send(try get(server.origin))
            }
        }
        #expect(elapsed < 2000, "\(elapsed) ms of real time")
    }

    @Test func aConnectThatIsNeverAcceptedTimesOut() throws {
        // A listener whose backlog is full: the kernel drops further SYNs, so connect hangs.
        let (listener, port) = unacceptingListener()
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        address.sin_port = port.bigEndian
        var fillers: [Int32] = []
        defer { for filler in fillers { close(filler) } }
        for _ in 0..<3 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            fillers.append(filler)
        }
        let http = client(connectTimeout: .milliseconds(300))
        let elapsed = milliseconds {
            #expect(throws: HTTPError.timeout(.connect)) { try http.send(try get("http://127.0.0.1:\(port)/")) }
        }
        #expect(elapsed >= 290 && elapsed < 2000)
    }

    @Test func aServerThatNeverReadsTimesOutWhileSending() throws {
        // The connection completes in the backlog but is never accepted, so nobody reads:
        // once the kernel buffers are full, the write waits until the deadline.
        let (listener, port) = unacceptingListener()
        defer { close(listener) }
        let body = [UInt8](repeating: 0x61, count: 64 << 20)
        let http = client(requestTimeout: .milliseconds(500))
        #expect(throws: HTTPError.timeout(.send)) {
            try http.send(HTTPRequest(method: "POST", url: try HTTPURL("http://127.0.0.1:\(port)/"), body: body))
        }
    }

    /// A listener on 127.0.0.1 with backlog 0 that nobody accepts from.
    private func unacceptingListener() -> (Int32, UInt16) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        listen(listener, 0)
        return (listener, UInt16(bigEndian: address.sin_port))
    }
}
