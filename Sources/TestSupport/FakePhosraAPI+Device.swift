/// The three device endpoints (docs/sync.md), after device auth.
extension FakePhosraAPI {
    /// `GET /device/policy[?since_version=N]`.
    func getPolicy(_ request: TestHTTPServer.Request, device: Device, fault: Fault?) -> Outcome {
        switch fault {
        case .serverError?, .badRequest?: return error(500, "internal server error")
        case .panic?: return panicked()
        default: break
        }
        let since = request.queryItems.first { $0.0 == "since_version" }.flatMap { GoJSON.atoi($0.1) }
        let (selected, age, generatedAt, override) = locked { state -> (FakePolicy?, Int, String, String?) in
            let selected = Self.selectedPolicy(for: device.childID, in: state)
            // generated_at: the time of every 200 with 0–9 fractional digits in turn (Go
            // trims trailing zeros); a stamp already served is replaced by a full one.
            state.policiesServed += 1
            var stamp = FakeTime.now(fractionDigits: state.policiesServed % 10, clock: clock)
            if state.generatedStamps.contains(stamp) { stamp = FakeTime.now(fractionDigits: 9, clock: clock) }
            state.generatedStamps.insert(stamp)
            return (selected, state.children[device.childID]?.age ?? 0, stamp, state.policyBodyOverride)
        }
        // Only the integer version is compared (docs/sync.md): a lower-numbered policy that took
        // over, or a birthday, still gets 304.
        if let since, let selected, selected.version <= since {
            return Outcome(reply: .respond(.init(status: 304)), status: 304)
        }
        guard let selected else { return error(404, "policy not found") }
        let outcome =
            override.map { jsonText(200, $0) }
            ?? json(200, selected.compiled(childID: device.childID, childAge: age, generatedAt: generatedAt))
        return fault == .dropAfterProcessing ? .drop() : outcome
    }

    /// `POST /device/report` {report_type, payload, reported_at}.
    func ingestReport(_ request: TestHTTPServer.Request, device: Device, fault: Fault?) -> Outcome {
        let reportType: String
        let payload: TestJSON?
        let reportedAt: String
        do throws(GoJSON.DecodeError) {
            let fields = try GoJSON.structFields(request.body, fields: ["report_type", "payload", "reported_at"])
            reportType = try GoJSON.string(fields["report_type"]) ?? ""
            payload = fields["payload"]  // json.RawMessage: any value, JSON null included
            reportedAt = try GoJSON.time(fields["reported_at"]) ?? FakeTime.zero
        } catch {
            return self.error(400, "invalid request body")
        }
        switch fault {
        case .badRequest?: return error(400, "invalid request body")
        case .serverError?: return error(500, "failed to process report")
        case .panic?: return panicked()
        default: break
        }
        // The INSERT: report_type is VARCHAR(50) (characters), payload JSONB NOT NULL.
        guard reportType.unicodeScalars.count <= 50, let payload else { return error(500, "failed to process report") }
        locked { state in
            state.reports.append(
                ReceivedReport(
                    deviceID: device.id, childID: device.childID, reportType: reportType,
                    payload: payload, reportedAt: reportedAt, body: request.body))
            if reportType == "enforcement_status", let version = Self.enforcementVersion(payload) {
                state.devices[device.id]?.lastPolicyVersion = version
                state.devices[device.id]?.enforcementSummary = payload
            }
        }
        return fault == .dropAfterProcessing ? .drop() : json(202, .object([("status", "accepted")]))
    }

    /// The payload as `EnforcementStatusReport{policy_version int, results []{category,
    /// status, framework, detail string}}`: its version (0 when absent), or nil when it
    /// does not unmarshal (the report is still stored).
    static func enforcementVersion(_ payload: TestJSON) -> Int? {
        do throws(GoJSON.DecodeError) {
            let fields = try GoJSON.structFields(payload, fields: ["policy_version", "results"])
            let version = try GoJSON.int(fields["policy_version"]) ?? 0
            if case .array(let results)? = fields["results"] {
                for result in results {
                    let members = try GoJSON.structFields(
                        result, fields: ["category", "status", "framework", "detail"])
                    for value in members.values { _ = try GoJSON.string(value) }
                }
            } else if let results = fields["results"], results != .null {
                throw GoJSON.DecodeError()
            }
            return version
        } catch {
            return nil
        }
    }

    /// `POST /device/ack {"version": N}` → `{"acknowledged_version": N}`.
    func acknowledge(_ request: TestHTTPServer.Request, device: Device, fault: Fault?) -> Outcome {
        let version: Int
        do throws(GoJSON.DecodeError) {
            version = try GoJSON.int(GoJSON.structFields(request.body, fields: ["version"])["version"]) ?? 0
        } catch {
            return self.error(400, "invalid request body")
        }
        switch fault {
        case .badRequest?: return error(400, "invalid request body")
        case .serverError?: return error(500, "failed to acknowledge version")
        case .panic?: return panicked()
        default: break
        }
        locked { state in
            state.devices[device.id]?.lastPolicyVersion = version
            state.acks.append(ReceivedAck(deviceID: device.id, version: version))
        }
        return fault == .dropAfterProcessing
            ? .drop() : json(200, .object([("acknowledged_version", .number(String(version)))]))
    }
}
