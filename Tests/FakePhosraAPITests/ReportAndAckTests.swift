import HTTPClient
import TestSupport
import Testing

/// docs/sync.md: reports (any type up to 50 characters, a payload, an RFC 3339 time)
/// and acks, with the server's status codes and side effects, and the fault switches.
@Suite(.blocking) struct ReportAndAckTests {
    @Test func fact9_aReportIsAcceptedWith202AndKept() throws {
        let harness = try Harness()
        let body =
            #"{"report_type":"blocked_attempt","reported_at":"2026-03-31T14:20:00.123+02:00","payload":{"batch_id":"b1","events":[]},"extra":true}"#
        let response = try harness.report(body)
        #expect(response.status == 202 && response.bodyText == "{\"status\":\"accepted\"}\n")
        let report = try #require(harness.fake.reports.first)
        #expect(
            report.reportType == "blocked_attempt" && report.deviceID == harness.deviceID
                && report.childID == harness.childID)
        #expect(report.payload["batch_id"] == "b1")
        #expect(report.reportedAt == "2026-03-31T14:20:00.123+02:00")
        #expect(report.body == Array(body.utf8))
        #expect(harness.fake.requests.last?.json?["payload"]?["batch_id"] == "b1")
    }

    @Test func fact9_anyReportTypeUpTo50CharactersAndLongerIs500() throws {
        let harness = try Harness()
        for type in ["", "violation", "anything at all", String(repeating: "ü", count: 50)] {
            #expect(try harness.report("{\"report_type\":\"\(type)\",\"payload\":{}}").status == 202, "\(type)")
        }
        let long = try harness.report("{\"report_type\":\"\(String(repeating: "x", count: 51))\",\"payload\":{}}")
        #expect(long.status == 500 && long.bodyText == errorBody(500, "failed to process report"))
        #expect(harness.fake.reports.count == 4)
    }

    @Test func fact9_aMissingPayloadIs500AndANullOneIsStored() throws {
        let harness = try Harness()
        #expect(try harness.report(#"{"report_type":"x"}"#).bodyText == errorBody(500, "failed to process report"))
        #expect(try harness.report("null").bodyText == errorBody(500, "failed to process report"))
        #expect(try harness.report(#"{"report_type":"x","payload":null}"#).status == 202)
        #expect(harness.fake.reports.map(\.payload) == [.null])
    }

    @Test(arguments: [
        "", "{", "not json", "[]", "\"text\"", #"{"report_type":5,"payload":{}}"#,
        #"{"report_type":"x","payload":{},"reported_at":1711894800}"#,
        #"{"report_type":"x","payload":{},"reported_at":"2026-03-31 14:20:00Z"}"#,
        #"{"report_type":"x","payload":{},"reported_at":"2026-03-31T14:20:00"}"#,
        #"{"report_type":"x","payload":{},"reported_at":"2026-02-30T14:20:00Z"}"#,
        #"{"report_type":"x","payload":{},"reported_at":"2026-03-31T24:00:00Z"}"#,
        #"{"report_type":"x","payload":{},"reported_at":"2026-03-31T14:20:00+24:00"}"#,
        #"{"report_type":"x","payload":{},"reported_at":"2026-03-31t14:20:00z"}"#,
    ])
    func fact9_malformedBodiesAndBadTimesAre400(body: String) throws {
        let harness = try Harness()
        let response = try harness.report(body)
        #expect(response.status == 400 && response.bodyText == errorBody(400, "invalid request body"))
        #expect(harness.fake.reports.isEmpty)
    }

    @Test func fact9_anAbsentTimeIsStoredAsGosZeroTime() throws {
        let harness = try Harness()
        #expect(try harness.report(#"{"report_type":"x","payload":{},"reported_at":null}"#).status == 202)
        #expect(try harness.report(#"{"Report_Type":"y","PAYLOAD":{}} trailing"#).status == 202)  // Go: keys fold case
        #expect(harness.fake.reports.map(\.reportedAt) == [FakeTime.zero, FakeTime.zero])
        #expect(harness.fake.reports.map(\.reportType) == ["x", "y"])
    }

    @Test func fact9_enforcementStatusRecordsThePolicyVersion() throws {
        let harness = try Harness()
        let payload =
            #"{"policy_version":46,"results":[{"category":"web_filter_level","status":"enforced","framework":"phosra-gate","detail":""}]}"#
        #expect(try harness.report("{\"report_type\":\"enforcement_status\",\"payload\":\(payload)}").status == 202)
        let device = try #require(harness.fake.device(harness.deviceID))
        #expect(device.lastPolicyVersion == 46)
        #expect(device.enforcementSummary == (try TestJSON.parse(payload)))
        // A payload that does not fit the struct is stored but changes nothing.
        #expect(
            try harness.report(#"{"report_type":"enforcement_status","payload":{"policy_version":"47"}}"#).status == 202
        )
        #expect(harness.fake.device(harness.deviceID)?.lastPolicyVersion == 46)
        // Other report types never touch it.
        #expect(try harness.report(#"{"report_type":"blocked_attempt","payload":{"policy_version":99}}"#).status == 202)
        #expect(harness.fake.device(harness.deviceID)?.lastPolicyVersion == 46)
        #expect(harness.fake.reports.count == 3)
    }

    @Test func fact9_switchesForTheNextReports() throws {
        let harness = try Harness()
        let body = #"{"report_type":"blocked_attempt","payload":{"batch_id":"b"}}"#
        harness.fake.injectFault(.badRequest, on: .report, times: 2)
        harness.fake.injectFault(.serverError, on: .report)
        harness.fake.injectFault(.dropAfterProcessing, on: .report)
        #expect(try harness.report(body).bodyText == errorBody(400, "invalid request body"))
        #expect(try harness.report(body).status == 400)
        #expect(try harness.report(body).bodyText == errorBody(500, "failed to process report"))
        #expect(harness.fake.reports.isEmpty)
        // The lost reply: stored, but the client only sees the connection close.
        #expect(throws: HTTPError.closed) { try harness.report(body) }
        #expect(harness.fake.reports.count == 1)
        #expect(harness.fake.requests.last?.status == 0)
        #expect(try harness.report(body).status == 202)
        #expect(harness.fake.reports.count == 2)
        harness.fake.injectFault(.dropBeforeProcessing, on: .report)
        #expect(throws: HTTPError.closed) { try harness.report(body) }
        #expect(harness.fake.reports.count == 2)
    }

    @Test func fact10_anAckEchoesTheVersion() throws {
        let harness = try Harness()
        let response = try harness.ack(#"{"version":46}"#)
        #expect(response.status == 200 && response.bodyText == "{\"acknowledged_version\":46}\n")
        #expect(harness.fake.device(harness.deviceID)?.lastPolicyVersion == 46)
        // Not checked against anything.
        #expect(try harness.ack(#"{"version":-3}"#).json?["acknowledged_version"] == -3)
        #expect(try harness.ack("{}").bodyText == "{\"acknowledged_version\":0}\n")
        #expect(try harness.ack("null").json?["acknowledged_version"] == 0)
        #expect(
            harness.fake.acks == [
                .init(deviceID: harness.deviceID, version: 46), .init(deviceID: harness.deviceID, version: -3),
                .init(deviceID: harness.deviceID, version: 0), .init(deviceID: harness.deviceID, version: 0),
            ])
    }

    @Test(arguments: [
        #"{"version":"3"}"#, #"{"version":3.0}"#, #"{"version":1e2}"#, #"{"version":true}"#, "", "{",
        #"{"version":99999999999999999999}"#,
    ])
    func fact10_aNonIntegerVersionIs400(body: String) throws {
        let harness = try Harness()
        #expect(try harness.ack(body).bodyText == errorBody(400, "invalid request body"))
        #expect(harness.fake.acks.isEmpty)
    }
}
