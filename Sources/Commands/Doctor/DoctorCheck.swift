import Gateway

/// One line of `phosra-gate doctor` (docs/doctor.md): what was checked, what was found and,
/// when it failed, what to do about it.
struct DoctorCheck: Equatable, Sendable {
    enum Outcome: String, Sendable {
        case ok
        case fail
        /// Not checked, with the reason in `what`; not a failure.
        case skip
    }

    /// Which check: `daemon`, `listener`, `canary`, `upstream`, `clock`, `api`, `firewall`,
    /// `web`, `lists`, `router_advertisements`, or `configuration` (docs/doctor.md names each).
    var check: String
    var outcome: Outcome
    /// What was found, one line.
    var what: String
    /// What to do: always for a failure, sometimes for a skip.
    var fix: String?

    static func ok(_ check: String, _ what: String) -> DoctorCheck {
        DoctorCheck(check: check, outcome: .ok, what: what, fix: nil)
    }

    static func fail(_ check: String, _ what: String, fix: String) -> DoctorCheck {
        DoctorCheck(check: check, outcome: .fail, what: what, fix: fix)
    }

    static func skip(_ check: String, _ what: String, fix: String? = nil) -> DoctorCheck {
        DoctorCheck(check: check, outcome: .skip, what: what, fix: fix)
    }
}

/// The checks as the parent reads them (one line each) or as a program does (`--json`).
enum DoctorReport {
    /// 0 when no check failed (skipped ones do not count), else 1.
    static func exitStatus(_ checks: [DoctorCheck]) -> Int32 {
        checks.contains { $0.outcome == .fail } ? 1 : 0
    }

    /// `ok   daemon: …`, `FAIL upstream: … — fix: …`, `skip clock: …`.
    static func line(_ check: DoctorCheck) -> String {
        let label =
            switch check.outcome {
            case .ok: "ok  "
            case .fail: "FAIL"
            case .skip: "skip"
            }
        return "\(label) \(check.check): \(check.what)" + (check.fix.map { " — fix: \($0)" } ?? "")
    }

    static func json(_ checks: [DoctorCheck]) -> String {
        let items = checks.map { check in
            JSONText.object([
                ("check", JSONText.string(check.check)), ("status", JSONText.string(check.outcome.rawValue)),
                ("what", JSONText.string(check.what)), ("fix", JSONText.string(check.fix)),
            ])
        }
        return JSONText.object([
            ("ok", "\(exitStatus(checks) == 0)"), ("checks", "[" + items.joined(separator: ",") + "]"),
        ])
    }
}
