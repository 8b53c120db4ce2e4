import HTTPClient
import TestSupport
import Testing

/// docs/sync.md: registration with a parent token: the exact 201, the key format, and the
/// errors — including the 500 for fields longer than their columns.
@Suite(.blocking) struct RegistrationTests {
    @Test func fact5_registrationAnswers201WithTheServersExactShape() throws {
        let harness = try Harness()
        let response = try harness.register(
            child: harness.childID,
            body: """
                {"device_name":"Living-room gateway","device_model":"RaspberryPi4B","os_version":"12","app_version":"0.1.0",
                 "capabilities":["dns_filter","http_connect_proxy"],"apns_token":null,"unknown_field":1}
                """)
        #expect(response.status == 201)
        #expect(response.header("Content-Type") == "application/json" && response.bodyText.hasSuffix("}\n"))
        let json = try #require(response.json)
        #expect(json.keys == ["device", "api_key"])
        let device = try #require(json["device"])
        #expect(
            device.keys == [
                "id", "child_id", "family_id", "platform_id", "device_name", "device_model", "os_version",
                "app_version", "last_policy_version", "status", "capabilities", "enforcement_summary",
                "created_at", "updated_at",
            ])
        #expect(device["platform_id"] == "apple")
        #expect(device["status"] == "active")
        #expect(device["last_policy_version"] == 0)
        #expect(device["enforcement_summary"] == .emptyObject)
        #expect(device["capabilities"] == ["dns_filter", "http_connect_proxy"])
        #expect(device["child_id"]?.string == harness.childID)
        #expect(device["family_id"]?.string == harness.fake.familyID)
        #expect(device["device_name"] == "Living-room gateway")
        #expect(FakeTime.isRFC3339(try #require(device["created_at"]?.string)))
        #expect(FakeIDs.canonicalUUID(try #require(device["id"]?.string)) == device["id"]?.string)
        let key = try #require(json["api_key"]?.string)
        #expect(key.count == 64 && key.allSatisfy { "0123456789abcdef".contains($0) })
        // The key works at once.
        #expect(try harness.policy(key: .some(key)).status == 200)
    }

    @Test func fact5_nullFieldsAreOmittedAndCapabilitiesDefaultToEmpty() throws {
        let harness = try Harness()
        let plain = try #require(try harness.register(child: harness.childID, body: "{}").json?["device"])
        #expect(plain["apns_token"] == nil && plain["last_seen_at"] == nil)
        #expect(plain["capabilities"] == [])
        #expect(plain["device_name"] == "")
        let withToken = try #require(
            try harness.register(child: harness.childID, body: #"{"apns_token":"t"}"#).json?["device"])
        #expect(withToken.keys?.contains("apns_token") == true && withToken["apns_token"] == "t")
    }

    @Test(arguments: [
        ("os_version", 20, 21), ("app_version", 20, 21), ("device_model", 100, 101), ("device_name", 255, 256),
    ])
    func fact5_fieldsLongerThanTheirColumnGet500(field: String, fits: Int, tooLong: Int) throws {
        let harness = try Harness()
        let ok = try harness.register(
            child: harness.childID, body: "{\"\(field)\":\"\(String(repeating: "é", count: fits))\"}")
        #expect(ok.status == 201)
        let long = try harness.register(
            child: harness.childID, body: "{\"\(field)\":\"\(String(repeating: "x", count: tooLong))\"}")
        #expect(long.status == 500 && long.bodyText == errorBody(500, "internal server error"))
        #expect(harness.fake.devices.count == 2)  // the harness's and the one that fit
    }

    @Test func fact5_registrationErrors() throws {
        let harness = try Harness()
        #expect(try harness.register(child: "abc", body: "{}").bodyText == errorBody(400, "invalid child ID"))
        #expect(
            try harness.register(child: harness.childID, body: "").bodyText == errorBody(400, "invalid request body"))
        #expect(
            try harness.register(child: harness.childID, body: "{\"device_name\":3}").bodyText
                == errorBody(400, "invalid request body"))
        #expect(
            try harness.register(child: harness.childID, body: "[]").bodyText == errorBody(400, "invalid request body"))
        #expect(try harness.register(child: FakeIDs.uuid(), body: "{}").bodyText == errorBody(404, "child not found"))
        #expect(try harness.register(child: harness.childID, body: "{}", token: nil).status == 401)
        #expect(try harness.register(child: harness.childID, body: "{}", token: "wrong").status == 401)
        harness.fake.addParentToken("guardian", role: .guardian)
        harness.fake.addParentToken("stranger", role: .outsider)
        #expect(
            try harness.register(child: harness.childID, body: "{}", token: "guardian").bodyText
                == errorBody(403, "insufficient role for this action"))
        #expect(
            try harness.register(child: harness.childID, body: "{}", token: "stranger").bodyText
                == errorBody(403, "not a member of this family"))
        // Go's uuid.Parse forms are accepted.
        #expect(try harness.register(child: harness.childID.uppercased(), body: "{}").status == 201)
        #expect(try harness.register(child: harness.childID.filter { $0 != "-" }, body: "{}").status == 201)
        #expect(harness.fake.devices.count == 3)
    }

    @Test func aLostRegistrationReplyStillCreatedTheDevice() throws {
        let harness = try Harness()
        harness.fake.injectFault(.dropAfterProcessing, on: .register)
        #expect(throws: HTTPError.closed) { try harness.register(child: harness.childID, body: "{}") }
        #expect(harness.fake.devices.count == 2)
    }

    @Test func listingDevicesHasTheServersBug() throws {
        let harness = try Harness()
        let other = harness.fake.addChild(age: 7)
        let list = { (child: String) in
            try harness.http.send(
                HTTPRequest(
                    url: try harness.url("children/\(child)/devices"),
                    headers: [("Authorization", "Bearer \(FakePhosraAPI.defaultParentToken)")]))
        }
        #expect(try list(other).bodyText == "null\n")
        #expect(try list(harness.childID).bodyText == errorBody(500, "internal server error"))
    }
}
