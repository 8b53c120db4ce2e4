import EventLoop
import Foundation
import SystemIO

/// A fake of the Phosra device API (docs/sync.md, every numbered fact), in-process on
/// 127.0.0.1, over HTTP or HTTPS (the server certificate of `TestCertificates`, for
/// `dot.test` and 127.0.0.1): the three device endpoints, registration and revocation with
/// a parent token, and the server's quirks — 401 for every key problem (and, with a switch,
/// for a database error), 304 with no body, 404 for a paused policy, a spurious 304 after a
/// switch to a lower-version policy, `generated_at` with a varying number of digits,
/// rate-limit headers everywhere and a plain-text 429.
///
/// Set up with `addChild`, `addPolicy` (or `FakePolicy.quickSetup`), `registerDevice` (or
/// the real `POST /children/{id}/devices` with `defaultParentToken`); change the world with
/// `updatePolicy`, `setPolicyStatus`, `setChildAge`, `revokeDevice`; misbehave with the
/// switches and `injectFault`; assert on `requests`, `reports`, `acks` and `device(_:)`.
/// `stop()` takes it off the network ("API down"); `start()` brings it back on the same port.
///
/// Thread-safe: the server threads and the test share the state behind one lock.
public final class FakePhosraAPI: @unchecked Sendable {
    /// The parent token accepted from the start, with the owner role.
    public static let defaultParentToken = "sandbox-parent-token"

    public let basePath: String
    /// The one family every child added here belongs to.
    public let familyID = FakeIDs.uuid()
    let lock = NSLock()
    var state = State()
    /// Where its timestamps come from (`last_seen_at`, `generated_at`, rate-limit windows).
    let clock: any Clock
    private var server: TestHTTPServer!
    private let scheme: String

    /// Starts serving at once.
    /// - Parameters:
    ///   - basePath: the route prefix, `/api/v1` like the real server, or any other.
    ///   - certificates: serve HTTPS with their server certificate; nil for plain HTTP.
    ///   - port: 0 lets the OS choose.
    ///   - idleTimeout: how long an idle keep-alive connection is kept (the real server: 15 s).
    ///   - clock: its wall clock (a `ManualClock` to move it by hand).
    public init(
        basePath: String = "/api/v1", certificates: TestCertificates? = nil, port: UInt16 = 0,
        idleTimeout: Duration = .seconds(15), clock: any Clock = SystemClock()
    ) throws {
        self.clock = clock
        self.basePath = basePath.hasSuffix("/") ? String(basePath.dropLast()) : basePath
        scheme = certificates == nil ? "http" : "https"
        let tls = try certificates.map { try TestTLSServerContext($0) }
        server = try TestHTTPServer(port: port, tls: tls, idleTimeout: idleTimeout) { [weak self] request in
            self?.handle(request) ?? .drop
        }
    }

    deinit { server.stop() }

    public var port: UInt16 { server.port }
    /// `http://127.0.0.1:PORT/api/v1` (or https, or the configured prefix).
    public var baseURL: String { "\(scheme)://127.0.0.1:\(port)\(basePath)" }
    /// `https://dot.test:PORT/api/v1`: the certificate's name (resolve it to 127.0.0.1).
    public var namedBaseURL: String { "\(scheme)://\(TestCertificates.serverName):\(port)\(basePath)" }
    public var isRunning: Bool { server.isRunning }
    /// Connections accepted since the fake was made.
    public var connectionsAccepted: Int { server.connectionsAccepted }
    /// Connections open now.
    public var openConnections: Int { server.openConnections }

    /// Off the network: the port refuses connections, open ones are closed. State is kept.
    public func stop() { server.stop() }

    /// Back on the same port.
    public func start() throws { try server.start() }

    func locked<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// Sleeps in small steps, returning early when the server stops.
    func pause(_ duration: Duration) {
        var left = duration
        while left > .zero && server.isRunning {
            let step = min(left, .milliseconds(10))
            TestHTTPServer.sleep(step)
            left -= step
        }
    }

    // MARK: Recorded

    /// Every request received, in order.
    public var requests: [ReceivedRequest] { locked { $0.requests } }
    /// Requests that matched `endpoint`.
    public func requests(to endpoint: Endpoint) -> [ReceivedRequest] { requests.filter { $0.endpoint == endpoint } }
    /// Reports stored (202 or a lost reply), in order.
    public var reports: [ReceivedReport] { locked { $0.reports } }
    /// Acks applied, in order.
    public var acks: [ReceivedAck] { locked { $0.acks } }

    /// Forgets requests, reports and acks (not devices or policies).
    public func clearRecorded() {
        locked {
            $0.requests = []
            $0.reports = []
            $0.acks = []
        }
    }

    // MARK: Switches

    /// Every request gets 429 while set.
    public var rateLimitEveryRequest: Bool {
        get { locked { $0.rateLimitEveryRequest } }
        set { locked { $0.rateLimitEveryRequest = newValue } }
    }

    /// Answer 429 once more than `rateLimit` requests arrived in the current minute (off
    /// by default, so tests with short intervals are not throttled; the headers always count).
    public var enforcesRateLimit: Bool {
        get { locked { $0.enforcesRateLimit } }
        set { locked { $0.enforcesRateLimit = newValue } }
    }

    /// Requests per minute (`X-RateLimit-Limit`), 100 like the real server.
    public var rateLimit: Int {
        get { locked { $0.rateLimit } }
        set { locked { $0.rateLimit = newValue } }
    }

    /// While set, every device key lookup fails as if the database were down: 401 `invalid
    /// or revoked device key` even for a valid key.
    public var keyLookupFails: Bool {
        get { locked { $0.keyLookupFails } }
        set { locked { $0.keyLookupFails = newValue } }
    }

    /// Added before every reply.
    public var responseDelay: Duration {
        get { locked { $0.responseDelay } }
        set { locked { $0.responseDelay = newValue } }
    }

    /// A cold start: the next `count` requests wait `delay` before they are handled.
    public func delayNextRequests(_ count: Int = 1, by delay: Duration) {
        locked { $0.pendingDelays += Array(repeating: delay, count: count) }
    }

    /// Served as the body of every 200 from `GET /device/policy` instead of the compiled
    /// policy (an invalid document, a wrong `child_id`, …); nil to stop.
    public var policyBodyOverride: String? {
        get { locked { $0.policyBodyOverride } }
        set { locked { $0.policyBodyOverride = newValue } }
    }

    /// The next `times` requests to `endpoint` misbehave as `fault` (queued after earlier ones).
    public func injectFault(_ fault: Fault, on endpoint: Endpoint, times: Int = 1) {
        locked { $0.faults[endpoint, default: []] += Array(repeating: fault, count: times) }
    }

    /// Faults still waiting for their request.
    public func pendingFaults(on endpoint: Endpoint) -> [Fault] { locked { $0.faults[endpoint] ?? [] } }
}
