/// The parent-side routes (docs/sync.md): register, list (with its bug), revoke.
extension FakePhosraAPI {
    /// `Authorization: Bearer <token>` → the token's role; nil → 401.
    private func parentRole(_ request: TestHTTPServer.Request) -> ParentRole? {
        guard let header = request.header("Authorization"), header.hasPrefix("Bearer ") else { return nil }
        let token = String(header.dropFirst("Bearer ".count))
        return locked { $0.parentTokens[token] }
    }

    /// The real server's Stytch middleware answers here; its exact text is not in the
    /// contract, so this one is the fake's own.
    private func unauthorizedParent() -> Outcome { error(401, "invalid or expired session") }

    private func forbidden(_ role: ParentRole) -> Outcome? {
        switch role {
        case .owner, .parent: nil
        case .guardian: error(403, "insufficient role for this action")
        case .outsider: error(403, "not a member of this family")
        }
    }

    /// `POST /children/{childID}/devices` → 201 `{"device":{…},"api_key":"<64 hex>"}`.
    func register(_ request: TestHTTPServer.Request, childID text: String, fault: Fault?) -> Outcome {
        guard let role = parentRole(request) else { return unauthorizedParent() }
        guard let childID = FakeIDs.canonicalUUID(text) else { return error(400, "invalid child ID") }
        let name: String
        let model: String
        let osVersion: String
        let appVersion: String
        let capabilities: [String]
        let apnsToken: String?
        do throws(GoJSON.DecodeError) {
            guard !request.body.isEmpty else { throw GoJSON.DecodeError() }
            let fields = try GoJSON.structFields(
                request.body,
                fields: [
                    "device_name", "device_model", "os_version",
                    "app_version", "capabilities", "apns_token",
                ])
            name = try GoJSON.string(fields["device_name"]) ?? ""
            model = try GoJSON.string(fields["device_model"]) ?? ""
            osVersion = try GoJSON.string(fields["os_version"]) ?? ""
            appVersion = try GoJSON.string(fields["app_version"]) ?? ""
            capabilities = try GoJSON.strings(fields["capabilities"]) ?? []
            apnsToken = try GoJSON.string(fields["apns_token"])
        } catch {
            return self.error(400, "invalid request body")
        }
        switch fault {
        case .badRequest?: return error(400, "invalid request body")
        case .serverError?: return error(500, "internal server error")
        case .panic?: return panicked()
        default: break
        }
        guard locked({ $0.children[childID] }) != nil else { return error(404, "child not found") }
        if let refusal = forbidden(role) { return refusal }
        // The INSERT (migrations/026): VARCHAR limits, counted in characters.
        let limits = [(name, 255), (model, 100), (osVersion, 20), (appVersion, 20), (apnsToken ?? "", 255)]
        guard limits.allSatisfy({ $0.0.unicodeScalars.count <= $0.1 }) else {
            return error(500, "internal server error")
        }
        let (deviceID, key) = registerDevice(
            childID: childID, name: name, model: model, osVersion: osVersion,
            appVersion: appVersion, capabilities: capabilities)
        let device = locked { state -> Device in
            state.devices[deviceID]?.apnsToken = apnsToken
            return state.devices[deviceID]!
        }
        guard fault != .dropAfterProcessing else { return .drop() }
        return json(201, .object([("device", Self.deviceJSON(device)), ("api_key", .string(key))]))
    }

    /// `GET /children/{childID}/devices`: `null` with no devices; with any, the repository's
    /// column-count bug (17 selected, 15 scanned) makes it a 500.
    func listDevices(_ request: TestHTTPServer.Request, childID text: String, fault: Fault?) -> Outcome {
        guard parentRole(request) != nil else { return unauthorizedParent() }
        guard let childID = FakeIDs.canonicalUUID(text) else { return error(400, "invalid child ID") }
        let count = locked { state in state.devices.values.filter { $0.childID == childID }.count }
        return count == 0 ? jsonText(200, "null") : error(500, "internal server error")
    }

    /// `DELETE /devices/{deviceID}` → 204, status `revoked`; the row is kept.
    func revoke(_ request: TestHTTPServer.Request, deviceID text: String, fault: Fault?) -> Outcome {
        guard let role = parentRole(request) else { return unauthorizedParent() }
        guard let deviceID = FakeIDs.canonicalUUID(text) else { return error(400, "invalid device ID") }
        switch fault {
        case .serverError?, .badRequest?: return error(500, "internal server error")
        case .panic?: return panicked()
        default: break
        }
        guard device(deviceID) != nil else { return error(404, "device not found") }
        if let refusal = forbidden(role) { return refusal }
        revokeDevice(deviceID)
        return fault == .dropAfterProcessing ? .drop() : Outcome(reply: .respond(.init(status: 204)), status: 204)
    }

    /// A DeviceRegistration in Go struct order; `apns_token` and `last_seen_at` omitted when null.
    static func deviceJSON(_ device: Device) -> TestJSON {
        var fields: [(String, TestJSON)] = [
            ("id", .string(device.id)), ("child_id", .string(device.childID)), ("family_id", .string(device.familyID)),
            ("platform_id", "apple"), ("device_name", .string(device.name)), ("device_model", .string(device.model)),
            ("os_version", .string(device.osVersion)), ("app_version", .string(device.appVersion)),
        ]
        if let token = device.apnsToken { fields.append(("apns_token", .string(token))) }
        if let seen = device.lastSeenAt { fields.append(("last_seen_at", .string(seen))) }
        fields += [
            ("last_policy_version", .number(String(device.lastPolicyVersion))), ("status", .string(device.status)),
            ("capabilities", .array(device.capabilities.map { .string($0) })),
            ("enforcement_summary", device.enforcementSummary),
            ("created_at", .string(device.createdAt)), ("updated_at", .string(device.updatedAt)),
        ]
        return .object(fields)
    }
}
