import EventLoop
import Glibc
import HTTPClient
import SystemIO
import TLS
import TestSupport

/// A client with short timeouts for loopback tests.
func client(
    tls: TLSContextHolder? = nil, requestTimeout: Duration = .seconds(5), connectTimeout: Duration = .seconds(2),
    maxResponseBytes: Int = 4 << 20, idleTimeout: Duration = .seconds(30),
    resolver: HostResolver = .system, clock: any Clock = SystemClock()
) -> HTTPClient {
    HTTPClient(
        tls: tls?.context, connectTimeout: connectTimeout, requestTimeout: requestTimeout,
        maxResponseBytes: maxResponseBytes, userAgent: "phosra-gate-test/1.0", idleTimeout: idleTimeout,
        resolver: resolver, clock: clock)
}

/// Wraps a context so call sites read `tls: .init(caFile)`.
struct TLSContextHolder {
    let context: TLSContext
    init(_ caFile: String?) throws { context = try TLSContext(caFile: caFile) }
}

func get(_ url: String, headers: [(String, String)] = []) throws -> HTTPRequest {
    HTTPRequest(method: "GET", url: try HTTPURL(url), headers: headers)
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A server answering every request with these exact bytes.
func rawServer(_ text: String, close: Bool = false, tls: TestTLSServerContext? = nil) throws -> TestHTTPServer {
    try TestHTTPServer(tls: tls) { _ in .raw(bytes(text), close: close) }
}

/// A port nothing listens on (bound, then closed).
func deadPort() -> UInt16 { FreePort.tcpAndUDP() }

/// Milliseconds on the monotonic clock, for timing assertions.
func milliseconds(_ body: () throws -> Void) rethrows -> Int {
    let start = SystemClock().now()
    try body()
    return Int((SystemClock().now() - start) / 1_000_000)
}
