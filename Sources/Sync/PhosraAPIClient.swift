/// What the sync needs from the Phosra device API (docs/sync.md), already mapped
/// from HTTP statuses to outcomes. The HTTP implementation is `PhosraHTTPAPI`; tests may
/// give their own.
public protocol PhosraAPIClient: Sendable {
    /// `GET /device/policy[?since_version=V]`.
    func fetchPolicy(sinceVersion: Int?) -> PolicyFetch
    /// `POST /device/report` with a complete JSON body.
    func report(_ body: [UInt8]) -> APIResult
    /// `POST /device/ack {"version": V}`.
    func ack(version: Int) -> APIResult
}

public enum PolicyFetch: Sendable, Equatable {
    /// 200 with the document's bytes.
    case policy([UInt8])
    /// 304: nothing newer than `since_version`.
    case notModified
    /// 404: the child has no active policy (paused).
    case noPolicy
    /// 401: maybe revoked, maybe the server's database hiccuped (docs/sync.md).
    case unauthorized
    /// 429 with `Retry-After` seconds.
    case rateLimited(retryAfter: Int64)
    /// Network errors and every other status (5xx included), with why.
    case failed(String)
}

public enum APIResult: Sendable, Equatable {
    /// 202 for a report, 200 for an ack.
    case accepted
    /// 400: the server will never take this body (a report goes to the dead-letter table).
    case rejected(String)
    case unauthorized
    case rateLimited(retryAfter: Int64)
    case failed(String)
}
