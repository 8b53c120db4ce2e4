import HTTPClient

/// The Phosra device API over HTTP(S) (docs/sync.md): `X-Device-Key`, the statuses
/// mapped as docs/sync.md#when-the-api-misbehaves says (304, 404, a 401 that may be transient, a plain-text 429 with
/// `Retry-After`, 5xx), and nothing that could carry the key into a log line.
public struct PhosraHTTPAPI: PhosraAPIClient {
    public let base: HTTPURL
    private let key: String
    private let client: HTTPClient

    public init(base: HTTPURL, key: String, client: HTTPClient) {
        self.base = base
        self.key = key
        self.client = client
    }

    public func fetchPolicy(sinceVersion: Int?) -> PolicyFetch {
        var url = base.appending(path: "device/policy")
        if let sinceVersion { url = url.appending(query: "since_version", String(sinceVersion)) }
        let response: HTTPResponse
        do { response = try client.send(HTTPRequest(method: "GET", url: url, headers: authorized)) } catch {
            return .failed(error.description)
        }
        switch response.status {
        case 200: return .policy(response.body)
        case 304: return .notModified
        case 404: return .noPolicy
        case 401: return .unauthorized
        case 429: return .rateLimited(retryAfter: Self.retryAfter(response))
        default: return .failed(Self.describe(response))
        }
    }

    public func report(_ body: [UInt8]) -> APIResult {
        post("device/report", body, accepted: 202)
    }

    public func ack(version: Int) -> APIResult {
        post("device/ack", Array("{\"version\":\(version)}".utf8), accepted: 200)
    }

    private func post(_ path: String, _ body: [UInt8], accepted: Int) -> APIResult {
        let request = HTTPRequest(
            method: "POST", url: base.appending(path: path),
            headers: authorized + [("Content-Type", "application/json")], body: body)
        let response: HTTPResponse
        do { response = try client.send(request) } catch { return .failed(error.description) }
        switch response.status {
        case accepted: return .accepted
        case 400: return .rejected(Self.describe(response))
        case 401: return .unauthorized
        case 429: return .rateLimited(retryAfter: Self.retryAfter(response))
        default: return .failed(Self.describe(response))
        }
    }

    private var authorized: [(String, String)] { [("X-Device-Key", key), ("Accept", "application/json")] }

    /// `Retry-After` in seconds; the API sends 60, and anything unreadable counts as that.
    static func retryAfter(_ response: HTTPResponse) -> Int64 {
        response.header("Retry-After").flatMap { Int64($0.trimmingWhitespaceAndNewlines()) }.map { max(1, $0) } ?? 60
    }

    /// `HTTP 500: failed to process report` from the API's error JSON, or its status alone.
    static func describe(_ response: HTTPResponse) -> String {
        let text = response.bodyText
        if let range = text.firstRange(of: "\"message\":\"") {
            let message = text[range.upperBound...].prefix { $0 != "\"" }
            return "HTTP \(response.status): \(message)"
        }
        return "HTTP \(response.status)"
            + (text.isEmpty ? "" : ": " + String(text.prefix(120)).trimmingWhitespaceAndNewlines())
    }

    /// The user agent: phosra-gate and its version, so the API's operators can tell a
    /// gateway's requests and its release from an SDK's (docs/sync.md).
    public static func userAgent(version: String) -> String { "phosra-gate/\(version) (Linux)" }
}
