import HTTPClient
import TestSupport
import Testing

/// docs/sync.md: rate-limit headers on every response; 429 is plain text with Retry-After.
@Suite(.blocking) struct RateLimitTests {
    @Test func fact3_everyResponseCarriesTheRateLimitHeaders() throws {
        let harness = try Harness()
        let responses = [
            try harness.policy(), try harness.policy(since: "42"), try harness.policy(key: .some(nil)),
            try harness.http.send(HTTPRequest(url: try harness.url("nope"))),
            try harness.http.send(HTTPRequest(method: "PUT", url: try harness.url("device/policy"))),
            try harness.revoke(harness.deviceID),
        ]
        #expect(responses.map(\.status) == [200, 304, 401, 404, 405, 204])
        var remaining: [Int] = []
        for response in responses {
            #expect(response.header("X-RateLimit-Limit") == "100")
            let reset = try #require(response.header("X-RateLimit-Reset").flatMap(Int.init))
            #expect(reset % 60 == 0 && reset > FakeTime.unixSeconds() - 1)
            remaining.append(try #require(response.header("X-RateLimit-Remaining").flatMap(Int.init)))
        }
        // Counted per request (unless the minute turned over in between).
        #expect(remaining == remaining.sorted(by: >) || remaining.contains(99))
    }

    @Test func fact3_theSwitchForces429WithRetryAfterAndAPlainTextBody() throws {
        let harness = try Harness()
        harness.fake.rateLimitEveryRequest = true
        for response in [
            try harness.policy(), try harness.report("{}"),
            try harness.http.send(HTTPRequest(url: try harness.url("x"))),
        ] {
            #expect(response.status == 429)
            #expect(response.bodyText == "Too Many Requests\n")
            #expect(response.header("Retry-After") == "60")
            #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
            #expect(response.header("X-RateLimit-Remaining") == "0")
        }
        #expect(harness.fake.reports.isEmpty)
        harness.fake.rateLimitEveryRequest = false
        harness.fake.injectFault(.rateLimited, on: .ack, times: 2)
        #expect(try harness.ack(#"{"version":1}"#).status == 429)
        #expect(try harness.policy().status == 200)
        #expect(try harness.ack(#"{"version":1}"#).status == 429)
        #expect(try harness.ack(#"{"version":1}"#).status == 200)
    }

    @Test func fact3_enforcedLimitCountsEveryRequestInTheMinute() throws {
        let harness = try Harness()
        harness.fake.rateLimit = 3
        harness.fake.enforcesRateLimit = true
        let statuses = try (0..<5).map { _ in try harness.policy(since: "42").status }
        // Unless the minute turned over mid-test, the 4th and 5th are over the limit.
        #expect(statuses == [304, 304, 304, 429, 429] || statuses.filter { $0 == 429 }.count < 2)
    }
}
