import EventLoop
import Foundation
import Glibc
import HTTPClient
import SystemIO
import TestSupport
import Testing

/// The fake as a server: HTTPS with the test CA, keep-alive, going down and coming back
/// on the same port, a cold start.
@Suite(.blocking) struct TransportTests {
    @Test func httpsWithTheTestCAUnderTheCertificatesNameAndAddress() throws {
        let certificates = try TestCertificates()
        let harness = try Harness(certificates: certificates)
        #expect(harness.fake.baseURL.hasPrefix("https://127.0.0.1:"))
        #expect(try harness.policy().status == 200)
        let named = try HTTPURL(harness.fake.namedBaseURL).appending(path: "device/policy")
        #expect(try harness.http.send(HTTPRequest(url: named, headers: [("X-Device-Key", harness.key)])).status == 200)
        // Untrusted without the test CA.
        let system = HTTPClient(userAgent: "t", clock: SystemClock())
        #expect(
            throws: HTTPError.tls(.handshakeFailed("certificate verify failed: unable to get local issuer certificate"))
        ) {
            try system.send(HTTPRequest(url: try harness.url("device/policy")))
        }
    }

    @Test func severalRequestsShareOneConnection() throws {
        let harness = try Harness()
        for _ in 0..<5 { #expect(try harness.policy(since: "42").status == 304) }
        #expect(try harness.report(#"{"report_type":"x","payload":{}}"#).status == 202)
        #expect(harness.fake.connectionsAccepted == 1 && harness.http.connectionsOpened == 1)
    }

    @Test func concurrentClientsAreServed() throws {
        let harness = try Harness()
        let results = Recorder<Int>()
        let threads = (0..<4).map { _ in
            Thread {
                let http = HTTPClient(userAgent: "t", clock: SystemClock())
                for _ in 0..<5 {
                    let url = try! HTTPURL(harness.fake.baseURL).appending(path: "device/policy")
                    results.append(
                        (try? http.send(HTTPRequest(url: url, headers: [("X-Device-Key", harness.key)])).status) ?? -1)
                }
            }
        }
        for thread in threads { thread.start() }
        #expect(waitUntil { results.values.count == 20 }, "all 20 concurrent requests answered")
        #expect(results.values.allSatisfy { $0 == 200 })
    }

    @Test func stoppedTheAPIIsDownAndComesBackOnTheSamePort() throws {
        let harness = try Harness()
        let port = harness.fake.port
        #expect(try harness.policy().status == 200)
        harness.fake.stop()
        #expect(!harness.fake.isRunning)
        #expect(throws: HTTPError.connect(SystemError("connect", errno: ECONNREFUSED, subject: "127.0.0.1:\(port)"))) {
            try harness.policy()
        }
        try harness.fake.start()
        #expect(harness.fake.port == port && harness.fake.isRunning)
        #expect(try harness.policy().status == 200)  // state kept: same key, same policy
        #expect(harness.fake.requests.count == 2)
    }

    @Test func aColdStartDelaysTheReply() throws {
        let harness = try Harness(requestTimeout: .milliseconds(300))
        harness.fake.delayNextRequests(1, by: .milliseconds(600))
        #expect(throws: HTTPError.timeout(.response)) { try harness.policy() }
        let patient = HTTPClient(requestTimeout: .seconds(5), userAgent: "t", clock: SystemClock())
        harness.fake.delayNextRequests(1, by: .milliseconds(200))
        let url = try harness.url("device/policy")
        let elapsed = try milliseconds {
            _ = try patient.send(HTTPRequest(url: url, headers: [("X-Device-Key", harness.key)]))
        }
        #expect(elapsed >= 190)
        harness.fake.responseDelay = .milliseconds(50)
        let slow = milliseconds { #expect((try? harness.policy().status) == 200) }
        #expect(slow >= 45)
    }

    @Test func anIdleConnectionIsClosedByTheServerAndTheClientReconnects() throws {
        let fake = try FakePhosraAPI(idleTimeout: .milliseconds(100))
        let child = fake.addChild(age: 9)
        fake.addPolicy(.quickSetup(age: 9), to: child)
        let key = fake.registerDevice(childID: child).apiKey
        let http = HTTPClient(userAgent: "t", clock: SystemClock())
        let request = HTTPRequest(
            url: try HTTPURL(fake.baseURL).appending(path: "device/policy"), headers: [("X-Device-Key", key)])
        #expect(try http.send(request).status == 200)
        #expect(waitUntil { fake.openConnections == 0 }, "the fake closed the idle connection")
        #expect(try http.send(request).status == 200)
        #expect(fake.connectionsAccepted == 2)
    }
}

final class Recorder<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Value] = []
    func append(_ value: Value) {
        lock.lock()
        items.append(value)
        lock.unlock()
    }
    var values: [Value] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
}

func milliseconds(_ body: () throws -> Void) rethrows -> Int {
    var start = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    try body()
    var end = timespec()
    clock_gettime(CLOCK_MONOTONIC, &end)
    return (end.tv_sec - start.tv_sec) * 1000 + (end.tv_nsec - start.tv_nsec) / 1_000_000
}
