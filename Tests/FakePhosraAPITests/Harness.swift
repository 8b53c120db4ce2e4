import EventLoop
import HTTPClient
import SystemIO
import TLS
import TestSupport

/// A fake API with one child (age 10), its quick-setup policy (version 42) and one
/// registered device, and an HTTPClient to talk to it.
struct Harness {
    let fake: FakePhosraAPI
    let http: HTTPClient
    let childID: String
    let policyID: String
    let deviceID: String
    let key: String

    /// `clock`: the fake's (its timestamps); the client always runs on the system clock.
    init(
        basePath: String = "/api/v1", certificates: TestCertificates? = nil, requestTimeout: Duration = .seconds(5),
        clock: any Clock = SystemClock()
    ) throws {
        fake = try FakePhosraAPI(basePath: basePath, certificates: certificates, clock: clock)
        let context = try certificates.map { try TLSContext(caFile: $0.caFile) }
        http = HTTPClient(
            tls: context, connectTimeout: .seconds(2), requestTimeout: requestTimeout,
            userAgent: "phosra-gate/test", resolver: .fixed(["dot.test": ["127.0.0.1"]]), clock: SystemClock())
        childID = fake.addChild(age: 10)
        policyID = fake.addPolicy(.quickSetup(age: 10), to: childID)
        (deviceID, key) = fake.registerDevice(childID: childID)
    }

    func url(_ path: String) throws -> HTTPURL { try HTTPURL(fake.baseURL).appending(path: path) }

    /// `GET /device/policy[?since_version=…]` with the device key (or `key`; nil sends none).
    func policy(since: String? = nil, key: String?? = .none) throws -> HTTPResponse {
        var url = try url("device/policy")
        if let since { url = url.appending(query: "since_version", since) }
        return try http.send(HTTPRequest(url: url, headers: headers(key)))
    }

    func post(_ path: String, _ body: String, key: String?? = .none) throws -> HTTPResponse {
        try http.send(
            HTTPRequest(
                method: "POST", url: try url(path),
                headers: headers(key) + [("Content-Type", "application/json")], body: Array(body.utf8)))
    }

    func report(_ body: String, key: String?? = .none) throws -> HTTPResponse {
        try post("device/report", body, key: key)
    }

    func ack(_ body: String, key: String?? = .none) throws -> HTTPResponse { try post("device/ack", body, key: key) }

    /// `.none`: the harness device's key; `.some(nil)`: no header; `.some(k)`: k.
    private func headers(_ key: String??) -> [(String, String)] {
        switch key {
        case .none: [("X-Device-Key", self.key)]
        case .some(nil): []
        case .some(let value?): [("X-Device-Key", value)]
        }
    }

    /// The parent's registration call.
    func register(child: String, body: String, token: String? = FakePhosraAPI.defaultParentToken) throws -> HTTPResponse
    {
        var headers = [("Content-Type", "application/json")]
        if let token { headers.append(("Authorization", "Bearer \(token)")) }
        return try http.send(
            HTTPRequest(
                method: "POST", url: try url("children/\(child)/devices"), headers: headers,
                body: Array(body.utf8)))
    }

    func revoke(_ deviceID: String, token: String = FakePhosraAPI.defaultParentToken) throws -> HTTPResponse {
        try http.send(
            HTTPRequest(
                method: "DELETE", url: try url("devices/\(deviceID)"),
                headers: [("Authorization", "Bearer \(token)")]))
    }
}

extension HTTPResponse {
    var json: TestJSON? { try? TestJSON.parse(body) }
}

/// `{"error":"<text>","message":"<message>","code":N}` plus Go's newline.
func errorBody(_ status: Int, _ message: String) -> String {
    "{\"error\":\"\(TestHTTPServer.statusText(status))\",\"message\":\"\(message)\",\"code\":\(status)}\n"
}
