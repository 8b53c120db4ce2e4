import COpenSSL

/// Setting up and changing what the fake knows: parents, children, policies, devices.
extension FakePhosraAPI {
    /// Accepts `token` as `Authorization: Bearer <token>` with `role`.
    public func addParentToken(_ token: String, role: ParentRole = .owner) {
        locked { $0.parentTokens[token] = role }
    }

    /// A child of the fake's family; returns its id.
    @discardableResult
    public func addChild(age: Int, id: String = FakeIDs.uuid()) -> String {
        let canonical = FakeIDs.canonicalUUID(id) ?? id
        locked { $0.children[canonical] = Child(id: canonical, familyID: familyID, age: age) }
        return canonical
    }

    /// A birthday: `child_age` (and the age-derived fields) change, the version does not.
    public func setChildAge(_ childID: String, _ age: Int) {
        locked { $0.children[childID]?.age = age }
    }

    /// Deletes the child; its devices go with it (ON DELETE CASCADE), so their keys get 401.
    public func removeChild(_ childID: String) {
        locked { state in
            state.children[childID] = nil
            state.policies.removeAll { $0.childID == childID }
            for (id, device) in state.devices where device.childID == childID { state.devices[id] = nil }
            state.deviceOrder.removeAll { state.devices[$0] == nil }
        }
    }

    /// Adds `policy` to the child's policies (after the existing ones in creation order).
    @discardableResult
    public func addPolicy(_ policy: FakePolicy, to childID: String) -> String {
        locked { $0.policies.append(StoredPolicy(childID: childID, policy: policy)) }
        return policy.policyID
    }

    /// Changes a policy's rules: `change` edits it, then the version goes up by
    /// `versionBump` (1 per rule row touched, docs/sync.md; a bulk change of 4 rules is +4).
    public func updatePolicy(_ policyID: String, versionBump: Int = 1, _ change: (inout FakePolicy) -> Void = { _ in })
    {
        locked { state in
            guard let index = state.policies.firstIndex(where: { $0.policy.policyID == policyID }) else { return }
            change(&state.policies[index].policy)
            state.policies[index].policy.version += versionBump
        }
    }

    /// Activates, pauses or drafts a policy; like every UPDATE of the row, +1 version.
    public func setPolicyStatus(_ policyID: String, _ status: FakePolicy.Status) {
        updatePolicy(policyID) { $0.status = status }
    }

    /// Re-prioritises a policy (+1 version).
    public func setPolicyPriority(_ policyID: String, _ priority: Int) {
        updatePolicy(policyID) { $0.priority = priority }
    }

    public func deletePolicy(_ policyID: String) {
        locked { $0.policies.removeAll { $0.policy.policyID == policyID } }
    }

    public func policy(_ policyID: String) -> FakePolicy? {
        locked { $0.policies.first { $0.policy.policyID == policyID }?.policy }
    }

    /// What the device endpoint serves: the active policy with the lowest priority number,
    /// the earliest created on a tie (docs/sync.md); nil means 404 `policy not found`.
    public func selectedPolicy(for childID: String) -> FakePolicy? {
        locked { Self.selectedPolicy(for: childID, in: $0) }
    }

    static func selectedPolicy(for childID: String, in state: State) -> FakePolicy? {
        state.policies.enumerated()
            .filter { $0.element.childID == childID && $0.element.policy.status == .active }
            .min { ($0.element.policy.priority, $0.offset) < ($1.element.policy.priority, $1.offset) }?
            .element.policy
    }

    /// Registers a device without HTTP; returns its id and key.
    public func registerDevice(
        childID: String, name: String = "Living-room gateway", model: String = "RaspberryPi4B",
        osVersion: String = "12", appVersion: String = "0.1.0",
        capabilities: [String] = ["dns_filter", "http_connect_proxy"]
    ) -> (deviceID: String, apiKey: String) {
        let key = FakeIDs.deviceKey()
        let now = FakeTime.now(fractionDigits: 6, clock: clock)
        let device = Device(
            id: FakeIDs.uuid(), childID: childID, familyID: familyID, name: name, model: model,
            osVersion: osVersion, appVersion: appVersion, apnsToken: nil, capabilities: capabilities,
            status: "active", lastPolicyVersion: 0, lastSeenAt: nil, enforcementSummary: .emptyObject,
            apiKeyHash: Self.sha256Hex(key), createdAt: now, updatedAt: now)
        locked { state in
            state.devices[device.id] = device
            state.deviceOrder.append(device.id)
        }
        return (device.id, key)
    }

    /// What `DELETE /devices/{id}` does: status `revoked`, the row kept; its key gets 401.
    public func revokeDevice(_ deviceID: String) {
        locked { state in
            state.devices[deviceID]?.status = "revoked"
            state.devices[deviceID]?.updatedAt = FakeTime.now(fractionDigits: 6, clock: clock)
        }
    }

    public func device(_ deviceID: String) -> Device? { locked { $0.devices[deviceID] } }

    /// Every device, in registration order.
    public var devices: [Device] { locked { state in state.deviceOrder.compactMap { state.devices[$0] } } }

    /// hex(sha256(utf8(text))), as the server stores a key.
    public static func sha256Hex(_ text: String) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { SHA256(input.baseAddress, input.count, $0.baseAddress) }
        }
        return FakeIDs.hexString(digest)
    }
}
