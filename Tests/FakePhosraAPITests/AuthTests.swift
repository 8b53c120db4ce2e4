import EventLoop
import Glibc
import HTTPClient
import SystemIO
import TestSupport
import Testing

/// docs/sync.md: the device key, exactly as sent, looked up by its SHA-256 among
/// active devices; every failure a 401; revocation; last_seen_at.
@Suite(.blocking) struct AuthTests {
    @Test func fact4_aMissingKeyAndAnUnknownKeyGetTheirOwn401() throws {
        let harness = try Harness()
        let missing = try harness.policy(key: .some(nil))
        #expect(missing.status == 401)
        #expect(missing.bodyText == errorBody(401, "missing X-Device-Key header"))
        #expect(try harness.policy(key: .some("")).bodyText == errorBody(401, "missing X-Device-Key header"))
        let unknown = try harness.policy(key: .some(String(repeating: "0", count: 64)))
        #expect(unknown.status == 401 && unknown.bodyText == errorBody(401, "invalid or revoked device key"))
        #expect(unknown.header("Content-Type") == "application/json")
    }

    @Test func fact4_theKeyIsComparedExactlyAsSent() throws {
        let harness = try Harness()
        #expect(try harness.policy(key: .some(harness.key.uppercased())).status == 401)
        #expect(try harness.policy(key: .some(harness.key + "0")).status == 401)
        #expect(try harness.policy(key: .some(harness.key)).status == 200)
        let device = try #require(harness.fake.device(harness.deviceID))
        #expect(device.apiKeyHash == FakePhosraAPI.sha256Hex(harness.key))
        #expect(device.apiKeyHash != harness.key)
        // sha256("abc"), the FIPS 180-2 example.
        #expect(FakePhosraAPI.sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func fact4_aDatabaseErrorLooksLikeARevokedKeyAndPasses() throws {
        let harness = try Harness()
        harness.fake.keyLookupFails = true
        for _ in 0..<3 {
            #expect(try harness.policy().bodyText == errorBody(401, "invalid or revoked device key"))
        }
        harness.fake.keyLookupFails = false
        #expect(try harness.policy().status == 200)
        harness.fake.injectFault(.keyLookupFails, on: .report)
        #expect(try harness.report(#"{"report_type":"x","payload":{}}"#).status == 401)
        #expect(try harness.report(#"{"report_type":"x","payload":{}}"#).status == 202)
        #expect(harness.fake.device(harness.deviceID)?.status == "active")
    }

    @Test func fact6_deleteRevokesWith204AndTheKeyThenGets401() throws {
        let harness = try Harness()
        #expect(try harness.policy().status == 200)
        let deleted = try harness.revoke(harness.deviceID)
        #expect(deleted.status == 204 && deleted.body.isEmpty && deleted.header("Content-Length") == nil)
        for response in [
            try harness.policy(), try harness.report(#"{"report_type":"x","payload":{}}"#), try harness.ack("{}"),
        ] {
            #expect(response.status == 401 && response.bodyText == errorBody(401, "invalid or revoked device key"))
        }
        #expect(harness.fake.device(harness.deviceID)?.status == "revoked")  // the row is kept
        #expect(try harness.revoke(FakeIDs.uuid()).bodyText == errorBody(404, "device not found"))
        #expect(try harness.revoke("42").bodyText == errorBody(400, "invalid device ID"))
    }

    @Test func fact6_deletingTheChildCascadesToItsDevices() throws {
        let harness = try Harness()
        harness.fake.removeChild(harness.childID)
        #expect(try harness.policy().bodyText == errorBody(401, "invalid or revoked device key"))
    }

    @Test func fact12_everyAuthenticatedCallUpdatesLastSeenAt() throws {
        let clock = ManualClock()
        let harness = try Harness(clock: clock)
        #expect(harness.fake.device(harness.deviceID)?.lastSeenAt == nil)
        _ = try harness.policy(key: .some("0"))
        #expect(harness.fake.device(harness.deviceID)?.lastSeenAt == nil)
        var seen: [String] = []
        let calls: [() throws -> HTTPResponse] = [
            { try harness.policy(since: "99") }, { try harness.ack("{\"version\":\"x\"}") }, { try harness.policy() },
        ]
        for (call, status) in zip(calls, [304, 400, 200]) {
            #expect(try call().status == status)
            let lastSeen = try #require(harness.fake.device(harness.deviceID)?.lastSeenAt)
            #expect(FakeTime.isRFC3339(lastSeen))
            #expect(lastSeen == FakeTime.now(fractionDigits: 6, clock: clock), "the time of the call")
            seen.append(lastSeen)
            clock.advance(by: 2_000_000)
        }
        #expect(Set(seen).count == 3)
        #expect(harness.fake.requests.map(\.deviceID) == [nil, harness.deviceID, harness.deviceID, harness.deviceID])
    }
}
