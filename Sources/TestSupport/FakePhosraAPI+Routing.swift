import EventLoop
import SystemIO

/// The request path through the fake, in the real server's middleware order
/// (docs/sync.md): delay (a cold start) → rate limiter (headers on every response,
/// 429 before routing) → router (404 plain text, 405 empty, neither authenticated) →
/// device auth for `/device/*`, bearer auth for the parent routes → the handler.
extension FakePhosraAPI {
    /// What a handler decided: the reply, the status to record, the device it served.
    struct Outcome {
        var reply: TestHTTPServer.Reply
        var status: Int
        var deviceID: String?

        static func drop(_ deviceID: String? = nil) -> Outcome { Outcome(reply: .drop, status: 0, deviceID: deviceID) }
    }

    func handle(_ request: TestHTTPServer.Request) -> TestHTTPServer.Reply {
        let delay = locked { state -> Duration in
            state.responseDelay + (state.pendingDelays.isEmpty ? .zero : state.pendingDelays.removeFirst())
        }
        if delay > .zero { pause(delay) }

        let limit = countRequest()
        let endpoint = route(method: request.method, path: request.path)
        var outcome: Outcome
        if limit.limited {
            outcome = rateLimited()
        } else {
            switch endpoint {
            case .none: outcome = notFound()
            case .some(.failure): outcome = Outcome(reply: .respond(.init(status: 405)), status: 405)
            case .some(.success(let (endpoint, parameter))):
                let fault = locked { state -> Fault? in
                    guard var queue = state.faults[endpoint], !queue.isEmpty else {
                        return state.faultShare?.draw(for: endpoint)
                    }
                    let fault = queue.removeFirst()
                    state.faults[endpoint] = queue
                    return fault
                }
                outcome = dispatch(endpoint, parameter: parameter, request: request, fault: fault)
            }
        }
        if case .respond(var response) = outcome.reply {
            response.headers = limit.headers + [("Date", Self.httpDate(clock: clock))] + response.headers
            outcome.reply = .respond(response)
        }
        record(request, endpoint: try? endpoint?.get().0, outcome: outcome)
        return outcome.reply
    }

    private func dispatch(
        _ endpoint: Endpoint, parameter: String, request: TestHTTPServer.Request, fault: Fault?
    ) -> Outcome {
        switch fault {
        case .rateLimited?: return rateLimited()
        case .dropBeforeProcessing?: return .drop()
        case .slow(let delay)?:
            pause(delay)
            return dispatch(endpoint, parameter: parameter, request: request, fault: nil)
        case .truncatedBody?:
            var outcome = dispatch(endpoint, parameter: parameter, request: request, fault: nil)
            if case .respond(var response) = outcome.reply, response.status == 200 {
                response.body = Array(response.body.prefix(response.body.count / 2))
                outcome.reply = .respond(response)
            }
            return outcome
        default: break
        }
        switch endpoint {
        case .health: return json(200, .object([("status", "ok")]))
        case .policy: return authenticated(request, fault) { getPolicy(request, device: $0, fault: fault) }
        case .report: return authenticated(request, fault) { ingestReport(request, device: $0, fault: fault) }
        case .ack: return authenticated(request, fault) { acknowledge(request, device: $0, fault: fault) }
        case .register: return register(request, childID: parameter, fault: fault)
        case .listDevices: return listDevices(request, childID: parameter, fault: fault)
        case .revoke: return revoke(request, deviceID: parameter, fault: fault)
        }
    }

    /// The route for a path: nil when unknown (404), a failure when the method does not
    /// fit (405). `{param}` matches one non-empty segment; a trailing slash matches nothing.
    func route(method: String, path: String) -> Result<(Endpoint, String), RouteError>? {
        if path == "/health" { return method == "GET" ? .success((.health, "")) : .failure(RouteError()) }
        guard path.hasPrefix(basePath + "/") else { return nil }
        let segments = path.dropFirst(basePath.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(
            String.init)
        guard !segments.contains("") else { return nil }
        let routes: [(pattern: [String], method: String, endpoint: Endpoint)] = [
            (["device", "policy"], "GET", .policy), (["device", "report"], "POST", .report),
            (["device", "ack"], "POST", .ack), (["children", "*", "devices"], "POST", .register),
            (["children", "*", "devices"], "GET", .listDevices), (["devices", "*"], "DELETE", .revoke),
        ]
        var pathMatched = false
        for route in routes where route.pattern.count == segments.count {
            let matches = zip(route.pattern, segments).allSatisfy { $0 == "*" || $0 == $1 }
            guard matches else { continue }
            pathMatched = true
            if route.method == method {
                return .success((route.endpoint, zip(route.pattern, segments).first { $0.0 == "*" }?.1 ?? ""))
            }
        }
        return pathMatched ? .failure(RouteError()) : nil
    }

    struct RouteError: Error {}

    /// Device auth (`internal/handler/middleware/device_auth.go`): the header exactly as
    /// sent, hex(sha256(key)) among active devices; every failure is a 401. A valid key
    /// updates `last_seen_at`.
    private func authenticated(
        _ request: TestHTTPServer.Request, _ fault: Fault?, _ body: (Device) -> Outcome
    ) -> Outcome {
        let key = request.header("X-Device-Key") ?? ""
        guard !key.isEmpty else { return error(401, "missing X-Device-Key header") }
        let hash = Self.sha256Hex(key)
        let device = locked { state -> Device? in
            guard !state.keyLookupFails, fault != .keyLookupFails,
                let id = state.devices.first(where: { $0.value.apiKeyHash == hash && $0.value.status == "active" })?.key
            else { return nil }
            state.devices[id]?.lastSeenAt = FakeTime.now(fractionDigits: 6, clock: clock)
            return state.devices[id]
        }
        guard let device else { return error(401, "invalid or revoked device key") }
        var outcome = body(device)
        outcome.deviceID = device.id
        return outcome
    }

    /// The global limiter: counts every request in a fixed one-minute window (the real
    /// one slides); 429 when switched on, or when enforcing and over the limit.
    private func countRequest() -> (limited: Bool, headers: [(String, String)]) {
        let now = FakeTime.unixSeconds(clock: clock)
        return locked { state in
            let window = now - now % 60
            if window != state.windowStart {
                state.windowStart = window
                state.windowCount = 0
            }
            state.windowCount += 1
            let over = state.enforcesRateLimit && state.windowCount > state.rateLimit
            let limited = state.rateLimitEveryRequest || over
            let remaining = limited ? 0 : max(0, state.rateLimit - state.windowCount)
            return (
                limited,
                [
                    ("X-RateLimit-Limit", String(state.rateLimit)), ("X-RateLimit-Remaining", String(remaining)),
                    ("X-RateLimit-Reset", String(window + 60)),
                ]
            )
        }
    }

    private func record(_ request: TestHTTPServer.Request, endpoint: Endpoint?, outcome: Outcome) {
        let received = ReceivedRequest(
            method: request.method, path: request.path, query: request.query, queryItems: request.queryItems,
            headers: request.headers, body: request.body,
            json: request.body.isEmpty ? nil : try? TestJSON.parse(request.body),
            endpoint: endpoint, status: outcome.status, deviceID: outcome.deviceID)
        locked { $0.requests.append(received) }
    }

    // MARK: Replies

    /// `{"error":"<status text>","message":…,"code":N}` (pkg/httputil/response.go).
    func error(_ status: Int, _ message: String) -> Outcome {
        json(
            status,
            .object([
                ("error", .string(TestHTTPServer.statusText(status))), ("message", .string(message)),
                ("code", .number(String(status))),
            ]))
    }

    /// Go's `json.NewEncoder(w).Encode`: compact, then a newline.
    func json(_ status: Int, _ value: TestJSON) -> Outcome {
        jsonText(status, value.description)
    }

    func jsonText(_ status: Int, _ text: String) -> Outcome {
        Outcome(
            reply: .respond(.init(status: status, headers: [("Content-Type", "application/json")], text: text + "\n")),
            status: status)
    }

    /// chi Recoverer after a panic: 500, no body.
    func panicked() -> Outcome { Outcome(reply: .respond(.init(status: 500)), status: 500) }

    private func notFound() -> Outcome {
        Outcome(
            reply: .respond(.init(status: 404, headers: Self.plainTextHeaders, text: "404 page not found\n")),
            status: 404)
    }

    /// httprate's 429: `http.Error` plain text, plus `Retry-After: 60`.
    private func rateLimited() -> Outcome {
        Outcome(
            reply: .respond(
                .init(
                    status: 429, headers: [("Retry-After", "60")] + Self.plainTextHeaders,
                    text: "Too Many Requests\n")), status: 429)
    }

    private static let plainTextHeaders = [
        ("Content-Type", "text/plain; charset=utf-8"), ("X-Content-Type-Options", "nosniff"),
    ]

    /// `Date: Tue, 31 Mar 2026 14:05:09 GMT`.
    static func httpDate(clock: any Clock) -> String {
        let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let seconds = FakeTime.unixSeconds(clock: clock)
        let iso = FakeTime.format(seconds: seconds, nanoseconds: 0, fractionDigits: 0)  // 2026-03-31T14:05:09Z
        let parts = iso.split(whereSeparator: { "-T:Z".contains($0) }).map(String.init)
        let month = months[(Int(parts[1]) ?? 1) - 1]
        return
            "\(days[(seconds / 86_400) % 7]), \(parts[2]) \(month) \(parts[0]) \(parts[3]):\(parts[4]):\(parts[5]) GMT"
    }
}
