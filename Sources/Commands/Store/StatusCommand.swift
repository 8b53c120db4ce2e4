import Config
import EventLoop
import Gateway
import Glibc
import HTTPClient
import Notify
import ParentPage
import Policy
import Store
import Sync
import SystemIO
import TLS
import Zoneinfo

/// `phosra-gate status`: what the store says — whether `run` is alive and where it
/// listens, per profile the policy version and id, last sync and last error, revoked or
/// not, hits queued and dead-lettered, the devices seen in the last hour — and any note
/// (a database moved aside). Profiles of the configuration that never ran are listed too,
/// and the page's certificate with the fingerprint a parent compares with the browser's.
enum StatusCommand: Command {
    static let name = "status"
    static let summary = "what run is doing: policy versions, last sync, queued hits"
    static let usage = "usage: phosra-gate status [--json] [--state-dir DIR] [--config FILE]"

    struct Report {
        var stateDirectory: String
        var alive: Bool
        var heartbeat: Heartbeat?
        var profiles: [(state: SyncState, counts: (queued: Int, batched: Int, deadLettered: Int, mergedPending: Int))]
        /// Devices seen in the last hour, by profile, most recent first.
        var devices: [String: [ClientSighting]]
        /// App budgets in force when `run` last flushed (every 5 s), by profile.
        var budgets: [String: [BudgetStatusRow]] = [:]
        /// The parent's overrides in force (docs/parent-page.md#overrides), by profile.
        var overrides: [String: [OverrideRow]] = [:]
        /// What the hit bounds merged, dropped and folded (docs/sync.md#bounds), by profile.
        var bounds: [String: HitBoundTotals] = [:]
        var notes: [String]
        var web: Web? = nil
        /// The notification queue (docs/requests-and-notifications.md#notifications).
        var notices = NoticeQueueState()
        /// Where notifications go (`notify_url`'s host and the format); nil when off.
        var notify: (host: String, format: String)? = nil
        /// The shared store's connection as `run` last recorded it, and the changes made
        /// here that wait for it (docs/two-gateways.md).
        var sharedState: SharedStateRow? = nil
        var sharedWaiting = 0
        /// `shared_store`'s host, port and database; nil when this gateway shares nothing.
        var sharedAt: String? = nil
    }

    /// The parent's page as its files say (docs/parent-page.md#setting-up).
    struct Web {
        var passwordSet: Bool
        var certificatePath: String
        /// The certificate, or why it could not be read; nil when the file is not there yet.
        var certificate: Result<CertificateSummary, TLSError>?

        static func read(_ settings: Settings, stateDirectory: String) -> Web {
            let path = PageSetup.certificateFiles(settings, stateDirectory: stateDirectory).certificate
            let exists = Files.exists(path)
            return Web(
                passwordSet: Files.exists(stateDirectory + "/" + WebPassword.fileName), certificatePath: path,
                certificate: exists ? Result { () throws(TLSError) in try CertificateSummary(file: path) } : nil)
        }
    }

    /// How far back `status` lists devices.
    static let deviceWindow: Int64 = 3600

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        do {
            let arguments = try Arguments(command: words, flags: ["--json": .boolean])
            guard arguments.operands.isEmpty else { throw GatewayError.usage(usage) }
            let settings = try arguments.configuredSettings()
            let state = arguments.stateDirectory(settings)
            // A configuration that does not load still leaves the store to show.
            let configured =
                (try? ProfilePlan.from(
                    settings, registered: DeviceIdentity.registeredProfiles(stateDirectory: state)))?.flushedProfiles
                ?? []
            var report = try read(state, configured: configured, now: clock.wall().unixSeconds)
            report.web = Web.read(settings, stateDirectory: state)
            if let url = settings[Key.notifyURL] {
                report.notify = (url.authority, settings[Key.notifyFormat].rawValue)
            }
            report.sharedAt = settings[Key.sharedStore].map { SharedSync.place($0) }
            if arguments.isSet("--json") {
                console.out(json(report))
            } else {
                text(report, now: clock.wall().unixSeconds).forEach(console.out)
            }
            return 0
        } catch {
            console.err("phosra-gate status: \(error)")
            return 1
        }
    }

    /// `configured`: the profiles of the configuration, listed even without a row in the
    /// store; `now`: unix seconds.
    static func read(_ state: String, configured: [String] = [], now: Int64) throws(GatewayError) -> Report {
        var report = Report(
            stateDirectory: state, alive: DirectoryLock.isHeld(directory: state), heartbeat: nil,
            profiles: [], devices: [:], notes: [])
        let empty = (queued: 0, batched: 0, deadLettered: 0, mergedPending: 0)
        guard let store = try? Store.openReadOnly(directory: state) else {
            report.profiles = configured.map { (SyncState(profile: $0), empty) }
            return report
        }
        do {
            report.heartbeat = try store.heartbeat()
            var listed: Set<String> = []
            for state in try store.allSyncStates() {
                report.profiles.append((state, try store.queueCounts(profile: state.profile)))
                listed.insert(state.profile)
            }
            report.devices = Dictionary(grouping: try store.sightings(since: now - deviceWindow), by: \.profile)
            // `none` and profiles that never synced have no sync state; list them where the
            // configuration names them or where they served a device.
            for name in configured + report.devices.keys.sorted() where !listed.contains(name) {
                report.profiles.append((SyncState(profile: name), empty))
                listed.insert(name)
            }
            report.budgets = Dictionary(grouping: try store.budgetStatus(), by: \.profile)
            report.overrides = Dictionary(grouping: try store.liveOverrides(now: now), by: \.profile)
            for (state, _) in report.profiles {
                report.bounds[state.profile] = try store.boundTotals(profile: state.profile)
            }
            report.notes = try store.notes()
            report.notices = try store.noticeQueueState()
            report.sharedState = try store.sharedState()
            report.sharedWaiting = try store.unsharedCount()
        } catch {
            throw .usage("\(error)")
        }
        return report
    }

    /// `now`: unix seconds, for "… ago".
    static func text(_ report: Report, now: Int64) -> [String] {
        var lines: [String] = []
        if report.alive, let beat = report.heartbeat {
            lines.append(
                "run: alive (pid \(beat.pid), phosra-gate \(beat.version), up since \(StatusText.time(beat.startedAt)), "
                    + "heartbeat \(StatusText.ago(now - beat.updatedAt)))")
            for listener in beat.listeners { lines.append("  listening \(listener)") }
        } else {
            lines.append("run: not running (state \(report.stateDirectory))")
        }
        for (state, counts) in report.profiles {
            var line = "profile \(state.profile): "
            if state.profile == Profile.noneName {
                line += "unfiltered (default_profile = none)"
            } else {
                line += state.appliedVersion > 0 ? "policy version \(state.appliedVersion)" : "no policy yet"
            }
            if !state.policyID.isEmpty { line += " (\(state.policyID))" }
            if state.noActivePolicy {
                line +=
                    state.noPolicyUnfiltered
                    ? ", the API has no active policy (unfiltered: on_no_policy = allow)"
                    : ", the API has no active policy (keeping the last one)"
            }
            if let success = state.lastSuccessAt { line += ", last sync \(StatusText.ago(now - success))" }
            if let error = state.lastError, let at = state.lastErrorAt {
                line += ", last error \(StatusText.ago(now - at)): \(error)"
            }
            if state.revoked { line += ", REVOKED (the API refuses this device's key)" }
            line += "; hits queued \(counts.queued + counts.batched), dead-lettered \(counts.deadLettered)"
            lines.append(line)
            if let bounds = report.bounds[state.profile], !bounds.isEmpty {
                lines.append(
                    "  hits bounded: \(bounds.namesFolded) names folded into their rule, rows merged or dropped: "
                        + "\(bounds.queueRows) queued (\(counts.mergedPending) not reported yet), "
                        + "\(bounds.historyRows) history")
            }
            let devices = report.devices[state.profile] ?? []
            for override in report.overrides[state.profile] ?? [] {
                var text = "  override \(override.id): \(override.kind)"
                if let target = override.target { text += " \(TerminalText.safe(target))" }
                if let minutes = override.minutes { text += " +\(minutes) min" }
                text += override.endsAt.map { " until \(StatusText.rfc3339($0))" } ?? " until resumed"
                text += ", set \(StatusText.rfc3339(override.startsAt)) by \(TerminalText.safe(override.setBy))"
                lines.append(text)
            }
            lines.append(
                devices.isEmpty
                    ? "  no devices seen in the last hour"
                    : "  \(devices.count) device\(devices.count == 1 ? "" : "s") seen in the last hour:")
            for budget in report.budgets[state.profile] ?? [] {
                let used =
                    "\(budget.used) of \(budget.dailyMinutes) minutes used on "
                    + "\(CivilCalendar.isoDate(days: budget.day)), \(max(0, budget.dailyMinutes - budget.used)) left"
                lines.append(
                    budget.service == ServiceUsage.online
                        ? "  daily limit: \(used) (minutes online, estimated from network activity)"
                        : "  app \(budget.service): \(used)")
            }
            for device in devices {
                var text = "    \(device.client)"
                if device.mac != nil, let address = device.address { text += " at \(address)" }
                text += ", last seen \(StatusText.ago(now - device.lastSeen)), \(device.queries) quer"
                text += device.queries == 1 ? "y" : "ies"
                lines.append(text)
            }
        }
        if let web = report.web { lines.append(webLine(web)) }
        if let line = notifyLine(report, now: now) { lines.append(line) }
        if let line = sharedLine(report, now: now) { lines.append(line) }
        lines += report.notes.map { "note: \($0)" }
        return lines
    }

    /// `notifications: ntfy to HOST: N sent (last …); W waiting since …: ERROR; D dropped`.
    static func notifyLine(_ report: Report, now: Int64) -> String? {
        let queue = report.notices
        guard let notify = report.notify else {
            return queue.waiting > 0 ? "notifications: off (\(queue.waiting) events left waiting)" : nil
        }
        var line = "notifications: \(notify.format) to \(TerminalText.safe(notify.host)): \(queue.sent) sent"
        if let last = queue.lastSent { line += " (last \(StatusText.ago(now - last)))" }
        if queue.waiting > 0 {
            line += "; \(queue.waiting) waiting"
            if let oldest = queue.oldestWaiting { line += " since \(StatusText.ago(now - oldest))" }
            if let error = queue.lastError { line += ": " + TerminalText.safe(error) }
        }
        if queue.dropped > 0 {
            line += "; \(queue.dropped) dropped unsent (queue full"
            if let last = queue.lastDropped { line += ", last \(StatusText.ago(now - last))" }
            line += ")"
        }
        return line
    }

    /// `shared store: HOST:PORT/DB: connected since …` or `…: unreachable since …: ERROR;
    /// N changes waiting`.
    static func sharedLine(_ report: Report, now: Int64) -> String? {
        guard let place = report.sharedAt else { return nil }
        var line = "shared store: \(TerminalText.safe(place)): "
        if let state = report.sharedState, state.since > 0 {
            line += state.connected ? "connected" : "unreachable"
            line += " since \(StatusText.ago(now - state.since))"
            if !state.connected, let error = state.error {
                line += ": " + TerminalText.safe(error) + " (enforcing the last shared state)"
            }
        } else {
            line += "not connected yet"
        }
        line += "; \(report.sharedWaiting) change\(report.sharedWaiting == 1 ? "" : "s") waiting"
        return line
    }

    /// `web: certificate PATH sha256=…, valid until …`, in the `listening` log line's form.
    static func webLine(_ web: Web) -> String {
        let path = TerminalText.safe(web.certificatePath)
        switch web.certificate {
        case .success(let summary)?:
            return "web: certificate \(path) sha256=\(summary.fingerprintSHA256), "
                + "valid until \(StatusText.rfc3339(summary.notAfter))"
                + (web.passwordSet ? "" : " (the page is off: no password, phosra-gate web-password)")
        case .failure(let error)?:
            return "web: certificate \(path) unreadable: \(TerminalText.safe("\(error)"))"
        case nil:
            return web.passwordSet
                ? "web: no certificate yet at \(path) (run makes it when the page starts)"
                : "web: off (no password: phosra-gate web-password)"
        }
    }

    static func json(_ report: Report) -> String {
        func optional(_ value: Int64?) -> String { value.map { JSONText.string(StatusText.rfc3339($0)) } ?? "null" }
        func device(_ device: ClientSighting) -> String {
            JSONText.object([
                ("client", JSONText.string(device.client)),
                ("address", JSONText.string(device.address)), ("mac", JSONText.string(device.mac)),
                ("first_seen", optional(device.firstSeen)), ("last_seen", optional(device.lastSeen)),
                ("queries", "\(device.queries)"),
            ])
        }
        let profiles = report.profiles.map { state, counts in
            JSONText.object([
                ("profile", JSONText.string(state.profile)), ("policy_version", "\(state.appliedVersion)"),
                ("policy_id", JSONText.string(state.policyID)), ("last_sync", optional(state.lastSuccessAt)),
                ("last_error", JSONText.string(state.lastError)), ("last_error_at", optional(state.lastErrorAt)),
                ("revoked", "\(state.revoked)"), ("no_active_policy", "\(state.noActivePolicy)"),
                ("unfiltered", "\(state.noActivePolicy && state.noPolicyUnfiltered)"),
                ("hits_queued", "\(counts.queued + counts.batched)"), ("hits_dead_lettered", "\(counts.deadLettered)"),
                ("merged_pending", "\(counts.mergedPending)"),
                (
                    "merged_events",
                    JSONText.object([
                        ("queue_rows", "\(report.bounds[state.profile]?.queueRows ?? 0)"),
                        ("history_rows", "\(report.bounds[state.profile]?.historyRows ?? 0)"),
                        ("names_folded", "\(report.bounds[state.profile]?.namesFolded ?? 0)"),
                    ])
                ),
                (
                    "budgets",
                    "["
                        + (report.budgets[state.profile] ?? []).filter { $0.service != ServiceUsage.online }.map {
                            budget in
                            JSONText.object([
                                ("service", JSONText.string(budget.service)),
                                ("date", JSONText.string(CivilCalendar.isoDate(days: budget.day))),
                                ("daily_minutes", "\(budget.dailyMinutes)"), ("used", "\(budget.used)"),
                                ("left", "\(max(0, budget.dailyMinutes - budget.used))"),
                            ])
                        }.joined(separator: ",") + "]"
                ),
                (
                    "daily_limit",
                    (report.budgets[state.profile] ?? []).first { $0.service == ServiceUsage.online }.map { daily in
                        JSONText.object([
                            ("date", JSONText.string(CivilCalendar.isoDate(days: daily.day))),
                            ("used_minutes", "\(daily.used)"), ("limit_minutes", "\(daily.dailyMinutes)"),
                            ("left_minutes", "\(max(0, daily.dailyMinutes - daily.used))"),
                        ])
                    } ?? "null"
                ),
                (
                    "overrides",
                    "["
                        + (report.overrides[state.profile] ?? []).map { override in
                            JSONText.object([
                                ("id", "\(override.id)"), ("kind", JSONText.string(override.kind)),
                                ("target", override.target.map(JSONText.string) ?? "null"),
                                ("minutes", override.minutes.map { "\($0)" } ?? "null"),
                                ("start", JSONText.string(StatusText.rfc3339(override.startsAt))),
                                ("until", optional(override.endsAt)), ("set_by", JSONText.string(override.setBy)),
                            ])
                        }.joined(separator: ",") + "]"
                ),
                (
                    "devices_last_hour",
                    "[" + (report.devices[state.profile] ?? []).map(device).joined(separator: ",") + "]"
                ),
            ])
        }
        let beat = report.heartbeat
        let run = JSONText.object([
            ("alive", "\(report.alive)"), ("pid", beat.map { "\($0.pid)" } ?? "null"),
            ("version", JSONText.string(beat?.version)), ("started_at", optional(beat?.startedAt)),
            ("heartbeat_at", optional(beat?.updatedAt)),
            ("listeners", "[" + (beat?.listeners ?? []).map(JSONText.string).joined(separator: ",") + "]"),
        ])
        let summary = try? report.web?.certificate?.get()
        let error: String? =
            if case .failure(let error)? = report.web?.certificate { "\(error)" } else { nil }
        let web =
            report.web.map { web in
                JSONText.object([
                    ("password_set", "\(web.passwordSet)"), ("certificate", JSONText.string(web.certificatePath)),
                    ("sha256", JSONText.string(summary?.fingerprintSHA256)), ("not_after", optional(summary?.notAfter)),
                    ("error", JSONText.string(error)),
                ])
            } ?? "null"
        let queue = report.notices
        let notifications = JSONText.object([
            ("url_host", JSONText.string(report.notify?.host)), ("format", JSONText.string(report.notify?.format)),
            ("sent", "\(queue.sent)"), ("last_sent", optional(queue.lastSent)), ("waiting", "\(queue.waiting)"),
            ("oldest_waiting", optional(queue.oldestWaiting)), ("last_error", JSONText.string(queue.lastError)),
            ("dropped", "\(queue.dropped)"), ("last_dropped", optional(queue.lastDropped)),
        ])
        return JSONText.object([
            ("state_dir", JSONText.string(report.stateDirectory)), ("run", run),
            ("profiles", "[" + profiles.joined(separator: ",") + "]"), ("web", web),
            ("notifications", notifications),
            (
                "shared_store",
                report.sharedAt.map { place in
                    JSONText.object([
                        ("at", JSONText.string(place)), ("connected", "\(report.sharedState?.connected ?? false)"),
                        ("since", optional(report.sharedState?.since)),
                        ("error", JSONText.string(report.sharedState?.error)),
                        ("waiting", "\(report.sharedWaiting)"),
                    ])
                } ?? "null"
            ),
            ("notes", "[" + report.notes.map(JSONText.string).joined(separator: ",") + "]"),
        ])
    }
}
