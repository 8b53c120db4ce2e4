import DNSProxy
import DNSUpstream
import DNSWire
import Dispatch
import DomainMatch
import EventLoop
import Glibc
import Policy
import ProxyCore
import SystemIO
import TestSupport
import Testing

@testable import HTTPProxy

/// The epoll_ctl budget of a short tunnel (docs/performance.md#tunnel-set-up): a
/// `ProxyLoop` on a running loop, a real origin on loopback and a blocking client, as the
/// harness's `ip-small` scenario does it (`CONNECT 127.0.0.1:PORT`, one request, the
/// client closes). Every epoll_ctl is a system call on the tunnel's path; the loop counts
/// them. Before the count was held, a tunnel cost ten: two registrations, four changes of
/// interest around the connect and the SNI wait, two after the ends' EOFs and two removals.
@Suite(.blocking) struct TunnelSetupCallsTests {
    /// Never asked: the tunnels go to an IP literal.
    final class NoUpstream: UpstreamResolving {
        func resolve(
            _ question: DNSQuestion, dnssecOK: Bool, checkingDisabled: Bool, upstreams: [UpstreamSpec]?,
            completion: @escaping ([UInt8]?) -> Void
        ) { completion(nil) }
    }

    /// A `ProxyLoop` on the running `loop`, tunnelling to 127.0.0.1:`port`, and its port.
    static func startProxy(on loop: EventLoop, to port: UInt16) throws -> (ProxyLoop, UInt16) {
        try loop.runSync(timeout: 10_000_000_000) { () -> (ProxyLoop, UInt16) in
            let engine = DecisionEngine(
                system: SystemRules(DecisionOptions()),
                categories: CategorySet(matcher: LabelTrie(lists: [[]], listNames: ["adult"]), present: []),
                zone: .utc, profiles: ProfileTable(single: PolicyRules.unfiltered))
            let snapshot = ProxySnapshot(
                engine: engine, answers: AnswerBuilder(mode: .nxdomain, blockTTL: 10), localZones: LocalZones())
            let pipeline = QueryPipeline(
                snapshot: snapshot, cache: ResponseCache(capacity: 10, serveStaleMax: 0), hits: DiscardingHitRecorder())
            var settings = ProxySettings(connectPorts: [port], allowIPConnect: true)
            settings.allowLocalDestinations = true
            let proxy = ProxyLoop(
                loop: loop, driver: QueryDriver(loop: loop, pipeline: pipeline, upstream: NoUpstream()),
                snapshot: snapshot, settings: settings, hits: DiscardingHitRecorder(),
                caps: ProxyCaps(settings.capLimits), log: Logger())
            return (proxy, try proxy.listen(on: SocketAddress(ipv4: 0x7F00_0001, port: 0)).port)
        }
    }

    @Test func aShortTunnelCostsFourEpollControls() throws {
        let origin = try TestHTTPServer { _ in .respond(.init(status: 200, text: "ok")) }
        let group = try EventLoopGroup(loopCount: 1, name: "test-proxy", clock: SystemClock())
        defer { group.shutdownGracefully() }
        let loop = group.loops[0]
        let port = origin.port
        let (proxy, proxyPort) = try Self.startProxy(on: loop, to: port)
        defer { try? loop.runSync(timeout: 10_000_000_000) { proxy.stopAccepting() } }
        func tunnel() throws {
            let socket = try Self.connect(port: proxyPort)
            defer { close(socket) }
            try Self.exchange(
                socket, "CONNECT 127.0.0.1:\(port) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n", until: "\r\n\r\n",
                expecting: "HTTP/1.1 200")
            try Self.exchange(
                socket, "GET /small HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", until: "ok", expecting: "HTTP/1.1 200 OK")
            shutdown(socket, Int32(SHUT_WR))
            var byte: UInt8 = 0
            #expect(recv(socket, &byte, 1, 0) == 0, "the origin's close reaches the client")
        }
        try tunnel()  // the first one also sets up what the loop keeps (timers, the pipe pool)
        let before = try loop.runSync(timeout: 10_000_000_000) { loop.controlCalls }
        let count = 20
        for _ in 0..<count { try tunnel() }
        // The last tunnel's teardown runs when the origin's close reaches the proxy, before
        // the client sees it: by now every tunnel is closed.
        #expect(
            waitUntil { proxy.openConnections.load(ordering: .relaxed) == 0 })
        let calls = try loop.runSync(timeout: 10_000_000_000) { loop.controlCalls } - before
        // Adding the client and the origin, the origin from connecting to reading, and the
        // client's read side off after its EOF while the origin's answer may still come.
        #expect(calls == 4 * count, "\(Double(calls) / Double(count)) epoll_ctl a tunnel")
        // Every event's environment has the policy zone's wall time; the zone was read once.
        #expect(try loop.runSync(timeout: 10_000_000_000) { proxy.clock.zoneReads } == 1)
    }

    /// The read interest kept while the machine wants no bytes must be dropped when bytes
    /// it did not want arrive, or the loop would be told of them in every turn: a client
    /// that sends its first bytes with the CONNECT, and an origin that speaks first, each
    /// get through with a handful of loop turns.
    @Test func bytesNobodyWantedYetAreReportedOnce() throws {
        let origin = try BannerOrigin()
        let group = try EventLoopGroup(loopCount: 1, name: "test-proxy", clock: SystemClock())
        defer { group.shutdownGracefully() }
        let loop = group.loops[0]
        let (proxy, proxyPort) = try Self.startProxy(on: loop, to: origin.port)
        defer { try? loop.runSync(timeout: 10_000_000_000) { proxy.stopAccepting() } }
        let turnsBefore = loop.turns.snapshot.count
        for early in [true, false] {
            let socket = try Self.connect(port: proxyPort)
            defer { close(socket) }
            let connect = "CONNECT 127.0.0.1:\(origin.port) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            // Early: the client's first bytes come with the CONNECT, before the 200.
            let head = try Self.exchange(
                socket, connect + (early ? "hi" : ""), until: "\r\n\r\n", expecting: "HTTP/1.1 200")
            // The origin's banner waits behind the tunnel's first client bytes (the SNI
            // check reads them first), which arrived early or go now; with early bytes it
            // may come in the same read as the 200.
            let after = head.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
            try Self.exchange(socket, early ? "" : "hi", until: "HELLO", expecting: "", already: after)
        }
        let turns = loop.turns.snapshot.count - turnsBefore
        #expect(turns < 100, "\(turns) loop turns for two tunnels")
    }

    /// A blocking client socket to the proxy, each read and write bounded by 10 s.
    static func connect(port: UInt16) throws -> Int32 {
        try #require(LoopbackSocketFactory.connect(tcp: true, from: "127.0.0.1", to: port, timeout: 10))
    }

    /// Sends `text`, reads until `marker` has arrived (counting `already`, what an earlier
    /// read took past its own marker); the reply must start with `expecting`. Returns all
    /// that was read.
    @discardableResult
    static func exchange(
        _ socket: Int32, _ text: String, until marker: String, expecting: String, already: String = ""
    ) throws -> String {
        let bytes = Array(text.utf8)
        if !bytes.isEmpty { try #require(send(socket, bytes, bytes.count, 0) == bytes.count) }
        var received = Array(already.utf8)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            let count = recv(socket, &chunk, chunk.count, 0)
            try #require(count > 0, "the connection ended before \(marker.debugDescription)")
            received += chunk[0..<count]
        }
        let reply = String(decoding: received, as: UTF8.self)
        #expect(reply.hasPrefix(expecting))
        return reply
    }
}

/// An origin that speaks first: "HELLO" on every connection it accepts, then it reads
/// until the client closes. One thread per connection; closed with the object.
final class BannerOrigin: @unchecked Sendable {
    // Sendable: `listener` and `port` are immutable; the threads only use their own sockets.
    let listener: Int32
    let port: UInt16

    init() throws {
        let (listener, port) = try TestHTTPServer.listen(port: 0, host: "127.0.0.1")
        self.listener = listener
        self.port = port
        DispatchQueue.global().async {
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                DispatchQueue.global().async {
                    _ = send(connection, "HELLO", 5, Int32(MSG_NOSIGNAL))
                    var buffer = [UInt8](repeating: 0, count: 256)
                    while recv(connection, &buffer, buffer.count, 0) > 0 {}
                    close(connection)
                }
            }
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
