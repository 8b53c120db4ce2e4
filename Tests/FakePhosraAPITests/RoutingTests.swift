import HTTPClient
import TestSupport
import Testing

/// docs/sync.md: routes under a configurable base path, JSON with a trailing
/// newline, one error shape, 404 in plain text and 405 empty — neither authenticated.
@Suite(.blocking) struct RoutingTests {
    @Test func fact1_theDeviceAndRegistrationRoutesAreServedUnderTheBasePath() throws {
        let harness = try Harness()
        #expect(try harness.policy().status == 200)
        #expect(try harness.report(#"{"report_type":"web_activity","payload":{}}"#).status == 202)
        #expect(try harness.ack(#"{"version":42}"#).status == 200)
        let registered = try harness.register(child: harness.childID, body: #"{"device_name":"gw"}"#)
        #expect(registered.status == 201)
        let deviceID = try #require(registered.json?["device"]?["id"]?.string)
        #expect(try harness.revoke(deviceID).status == 204)
        #expect(harness.fake.requests.map(\.endpoint) == [.policy, .report, .ack, .register, .revoke])
        #expect(harness.fake.baseURL == "http://127.0.0.1:\(harness.fake.port)/api/v1")
    }

    @Test func fact1_anotherBasePathMovesEveryRoute() throws {
        let harness = try Harness(basePath: "/gateway/api/v2/")
        #expect(harness.fake.baseURL.hasSuffix("/gateway/api/v2"))
        #expect(try harness.policy().status == 200)
        let outside = try harness.http.send(
            HTTPRequest(
                url: try HTTPURL("http://127.0.0.1:\(harness.fake.port)/api/v1/device/policy"),
                headers: [("X-Device-Key", harness.key)]))
        #expect(outside.status == 404)
        let health = try harness.http.send(
            HTTPRequest(url: try HTTPURL("http://127.0.0.1:\(harness.fake.port)/health")))
        #expect(health.status == 200 && health.bodyText == "{\"status\":\"ok\"}\n")
    }

    @Test func fact2_jsonRepliesHaveTheContentTypeAndATrailingNewline() throws {
        let harness = try Harness()
        for response in [
            try harness.policy(), try harness.report(#"{"report_type":"x","payload":{}}"#),
            try harness.ack(#"{"version":1}"#), try harness.policy(key: .some("nope")),
        ] {
            #expect(response.header("Content-Type") == "application/json")
            #expect(response.body.last == UInt8(ascii: "\n"))
            #expect(response.body.dropLast().last == UInt8(ascii: "}"))
            #expect(response.json != nil)
        }
    }

    @Test func fact11_everyErrorHasTheSameShape() throws {
        let harness = try Harness()
        harness.fake.setPolicyStatus(harness.policyID, .paused)
        let errors = [
            try harness.policy(key: .some(nil)), try harness.policy(key: .some("0")), try harness.policy(),
            try harness.report("{"), try harness.ack(#"{"version":"3"}"#),
            try harness.register(child: "not-a-uuid", body: "{}"),
        ]
        #expect(errors.map(\.status) == [401, 401, 404, 400, 400, 400])
        for response in errors {
            let json = try #require(response.json)
            #expect(json.keys == ["error", "message", "code"])
            #expect(json["code"]?.int == response.status)
            #expect(json["error"]?.string == TestHTTPServer.statusText(response.status))
        }
        harness.fake.injectFault(.serverError, on: .report)
        #expect(
            try harness.report(#"{"report_type":"x","payload":{}}"#).bodyText
                == errorBody(500, "failed to process report"))
        harness.fake.injectFault(.serverError, on: .ack)
        #expect(try harness.ack(#"{"version":1}"#).bodyText == errorBody(500, "failed to acknowledge version"))
        harness.fake.injectFault(.panic, on: .ack)
        let panic = try harness.ack(#"{"version":1}"#)
        #expect(panic.status == 500 && panic.body.isEmpty)
    }

    @Test func fact13_unknownRoutesAre404PlainTextAndWrongMethods405EmptyWithoutAuth() throws {
        let harness = try Harness()
        for path in ["device/policies", "device/policy/", "device", "children/x/devices/y", "nope"] {
            let response = try harness.http.send(HTTPRequest(url: try harness.url(path)))
            #expect(response.status == 404, "\(path)")
            #expect(response.bodyText == "404 page not found\n")
            #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
        }
        for (method, path) in [
            ("POST", "device/policy"), ("GET", "device/report"), ("PUT", "device/ack"),
            ("HEAD", "device/policy"), ("DELETE", "children/\(harness.childID)/devices"),
            ("GET", "devices/\(harness.deviceID)"),
        ] {
            let response = try harness.http.send(HTTPRequest(method: method, url: try harness.url(path)))
            #expect(response.status == 405, "\(method) \(path)")
            #expect(response.body.isEmpty && response.header("Content-Type") == nil)
        }
        #expect(harness.fake.requests.allSatisfy { $0.deviceID == nil && $0.endpoint == nil })
    }
}
