import Config
import EventLoop
import Glibc
import Store
import SystemIO

/// `phosra-gate status`: what the store says — whether `run` is alive and where it
/// listens, per profile the policy version and id, last sync and last error, revoked or
/// not, hits queued and dead-lettered — and any note (a database moved aside).
enum StatusCommand {
    static let usage = "usage: phosra-gate status [--json] [--state-dir DIR] [--config FILE]"

    struct Report {
        var stateDirectory: String
        var alive: Bool
        var heartbeat: Heartbeat?
        var profiles: [(state: SyncState, counts: (queued: Int, batched: Int, deadLettered: Int, mergedPending: Int))]
        var notes: [String]
    }

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        do {
            let arguments: Arguments
            do { arguments = try Arguments(words, commandFlags: ["--json": .boolean, "--config": .value]) } catch {
                throw GatewayError.config(error)
            }
            guard arguments.operands.isEmpty else { throw GatewayError.usage(usage) }
            let settings = try EngineOptions.settings(configFlag: arguments.flag("--config"), flags: arguments.settings)
            let report = try read(StateDirectory.path(settings, configFlag: arguments.flag("--config")))
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

    static func read(_ state: String) throws(GatewayError) -> Report {
        var report = Report(
            stateDirectory: state, alive: DirectoryLock.isHeld(directory: state), heartbeat: nil,
            profiles: [], notes: [])
        guard let store = try? Store.openReadOnly(directory: state) else { return report }
        do {
            report.heartbeat = try store.heartbeat()
            for state in try store.allSyncStates() {
                report.profiles.append((state, try store.queueCounts(profile: state.profile)))
            }
            report.notes = try store.notes()
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
            line += state.appliedVersion > 0 ? "policy version \(state.appliedVersion)" : "no policy yet"
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
        }
        lines += report.notes.map { "note: \($0)" }
        return lines
    }

    static func json(_ report: Report) -> String {
        func optional(_ value: Int64?) -> String { value.map { JSONText.string(StatusText.rfc3339($0)) } ?? "null" }
        let profiles = report.profiles.map { state, counts in
            JSONText.object([
                ("profile", JSONText.string(state.profile)), ("policy_version", "\(state.appliedVersion)"),
                ("policy_id", JSONText.string(state.policyID)), ("last_sync", optional(state.lastSuccessAt)),
                ("last_error", JSONText.string(state.lastError)), ("last_error_at", optional(state.lastErrorAt)),
                ("revoked", "\(state.revoked)"), ("no_active_policy", "\(state.noActivePolicy)"),
                ("unfiltered", "\(state.noActivePolicy && state.noPolicyUnfiltered)"),
                ("hits_queued", "\(counts.queued + counts.batched)"), ("hits_dead_lettered", "\(counts.deadLettered)"),
                ("merged_pending", "\(counts.mergedPending)"),
            ])
        }
        let beat = report.heartbeat
        let run = JSONText.object([
            ("alive", "\(report.alive)"), ("pid", beat.map { "\($0.pid)" } ?? "null"),
            ("version", JSONText.string(beat?.version)), ("started_at", optional(beat?.startedAt)),
            ("heartbeat_at", optional(beat?.updatedAt)),
            ("listeners", "[" + (beat?.listeners ?? []).map(JSONText.string).joined(separator: ",") + "]"),
        ])
        return JSONText.object([
            ("state_dir", JSONText.string(report.stateDirectory)), ("run", run),
            ("profiles", "[" + profiles.joined(separator: ",") + "]"),
            ("notes", "[" + report.notes.map(JSONText.string).joined(separator: ",") + "]"),
        ])
    }
}
