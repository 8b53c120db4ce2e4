/// What the fake Phosra API stores, records and can be told to do.
extension FakePhosraAPI {
    /// A parent token's standing towards the fake's family (docs/sync.md): owners and parents may
    /// register and revoke; a guardian gets 403 `insufficient role for this action`, a
    /// member of another family 403 `not a member of this family`.
    public enum ParentRole: Sendable { case owner, parent, guardian, outsider }

    /// The routes faults can be injected into.
    public enum Endpoint: String, Sendable, Hashable {
        case policy = "GET /device/policy"
        case report = "POST /device/report"
        case ack = "POST /device/ack"
        case register = "POST /children/{childID}/devices"
        case listDevices = "GET /children/{childID}/devices"
        case revoke = "DELETE /devices/{deviceID}"
        case health = "GET /health"
    }

    /// One injected misbehaviour, used up by the next request to its endpoint.
    public enum Fault: Sendable, Hashable {
        /// 429, `Retry-After: 60`, plain-text `Too Many Requests\n`.
        case rateLimited
        /// The key lookup fails (database down): 401 `invalid or revoked device key` for a
        /// valid key.
        case keyLookupFails
        /// 400 `invalid request body`; nothing is recorded.
        case badRequest
        /// 500 with the endpoint's message (`failed to process report`, `failed to
        /// acknowledge version`, else `internal server error`); nothing is recorded.
        case serverError
        /// A handler panic: 500 with an empty body (chi's Recoverer).
        case panic
        /// The connection is closed before anything is processed.
        case dropBeforeProcessing
        /// Processed and recorded (a report stored, an ack applied, a device registered),
        /// then the connection is closed without a reply: a lost reply.
        case dropAfterProcessing
        /// Handled as usual after this long (a slow server): the client may give up, or be
        /// killed, while the request is processed all the same.
        case slow(Duration)
        /// A `200` whose JSON body is cut in half (with a `Content-Length` that fits the cut
        /// body): a proxy or a crash mid-write on the way.
        case truncatedBody
    }

    /// A device registration (docs/sync.md) as the fake holds it.
    public struct Device: Sendable, Equatable {
        public let id: String
        public let childID: String
        public let familyID: String
        public var name: String
        public var model: String
        public var osVersion: String
        public var appVersion: String
        public var apnsToken: String?
        public var capabilities: [String]
        /// "active" or "revoked".
        public var status: String
        /// From an `enforcement_status` report's `policy_version`, or an ack.
        public var lastPolicyVersion: Int
        /// RFC 3339; set by every authenticated device request.
        public var lastSeenAt: String?
        /// `{}` until an `enforcement_status` report, then its whole payload.
        public var enforcementSummary: TestJSON
        /// hex(sha256(key)): the key itself is never stored.
        public let apiKeyHash: String
        public let createdAt: String
        public var updatedAt: String
    }

    /// One request as received, with what the fake answered.
    public struct ReceivedRequest: Sendable {
        public let method: String
        /// The path as sent, without the query.
        public let path: String
        /// The raw query, nil when none.
        public let query: String?
        public let queryItems: [(String, String)]
        public let headers: [(String, String)]
        public let body: [UInt8]
        /// The body parsed as one JSON document; nil when empty or not JSON.
        public let json: TestJSON?
        /// The route it matched, nil for 404/405.
        public let endpoint: Endpoint?
        /// The status sent; 0 when the connection was dropped without a reply.
        public let status: Int
        /// The device its key authenticated as.
        public let deviceID: String?

        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
    }

    /// A report the fake stored (202, or a lost reply after storing).
    public struct ReceivedReport: Sendable {
        public let deviceID: String
        public let childID: String
        public let reportType: String
        /// JSON `null` when the client sent `"payload": null`.
        public let payload: TestJSON
        /// As sent, or Go's zero time when absent.
        public let reportedAt: String
        public let body: [UInt8]
    }

    public struct ReceivedAck: Sendable, Equatable {
        public let deviceID: String
        public let version: Int

        public init(deviceID: String, version: Int) {
            self.deviceID = deviceID
            self.version = version
        }
    }

    struct Child {
        let id: String
        let familyID: String
        var age: Int
    }

    struct StoredPolicy {
        let childID: String
        var policy: FakePolicy
    }

    /// Everything behind the fake's lock.
    struct State {
        var parentTokens: [String: ParentRole] = [FakePhosraAPI.defaultParentToken: .owner]
        var children: [String: Child] = [:]
        /// In creation order (the tie-break after priority, docs/sync.md).
        var policies: [StoredPolicy] = []
        var devices: [String: Device] = [:]
        var deviceOrder: [String] = []
        var requests: [ReceivedRequest] = []
        var reports: [ReceivedReport] = []
        var acks: [ReceivedAck] = []
        var faults: [Endpoint: [Fault]] = [:]
        var faultShare: FaultShare?
        var rateLimitEveryRequest = false
        var enforcesRateLimit = false
        var rateLimit = 100
        var keyLookupFails = false
        var responseDelay: Duration = .zero
        var pendingDelays: [Duration] = []
        var policyBodyOverride: String?
        var windowStart = 0
        var windowCount = 0
        var policiesServed = 0
        var generatedStamps: Set<String> = []
    }
}
