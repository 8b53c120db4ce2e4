import Config
import EventLoop
import Gateway
import Glibc
import Store
import SystemIO

/// `phosra-gate hits`: recent blocks from the store, newest first, grouped by name with
/// counts and reasons — the parent's view of what the child ran into.
enum HitsCommand: Command {
    static let name = "hits"
    static let summary = "recent blocks, newest first"
    static let usage =
        "usage: phosra-gate hits [--since DURATION] [--profile NAME] [--json] [--state-dir DIR] [--config FILE]"

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        do {
            let arguments = try Arguments(
                command: words, flags: ["--since": .value, "--profile": .value, "--json": .boolean])
            guard arguments.operands.isEmpty else { throw GatewayError.usage(usage) }
            let settings = try arguments.configuredSettings()
            let state = arguments.stateDirectory(settings)
            var since: Int64 = 86_400
            if let text = arguments.flag("--since") {
                guard let milliseconds = ValueType.parseDuration(text) else {
                    throw GatewayError.flag("--since", "\"\(text)\" is not a duration (e.g. 30m, 6h, 7d)")
                }
                since = milliseconds / 1000
            }
            let store: Store
            do { store = try Store.openReadOnly(directory: state) } catch {
                console.err("phosra-gate hits: no hits recorded in \(state) yet (\(error))")
                return 1
            }
            let now = clock.wall().unixSeconds
            let groups: [HistoryGroup]
            do { groups = try store.recentHits(since: now - since, profile: arguments.flag("--profile")) } catch {
                throw GatewayError.usage("\(error)")
            }
            for group in groups { console.out(arguments.isSet("--json") ? json(group) : line(group)) }
            if groups.isEmpty, !arguments.isSet("--json") { console.err("no blocks in the last \(since / 60) minutes") }
            return 0
        } catch {
            console.err("phosra-gate hits: \(error)")
            return 1
        }
    }

    static func line(_ group: HistoryGroup) -> String {
        let when = StatusText.time(group.lastSeen)
        var times = group.count == 1 ? "1 block" : "\(group.count) blocks"
        if group.names > 0 { times += group.names == 1 ? " of 1 name folded" : " of \(group.names) names folded" }
        // Stored before names were kept in their presentation form, a row may still hold
        // raw bytes: whatever came from outside is made safe for the terminal here too.
        let clients =
            group.clients.isEmpty ? "" : " from \(group.clients.map(TerminalText.safe).joined(separator: ", "))"
        let reasons = group.reasons.map(TerminalText.safe).joined(separator: ", ")
        return "\(when)  \(TerminalText.safe(group.domain))  \(times)  \(reasons)\(clients)  [\(group.profile)]"
    }

    static func json(_ group: HistoryGroup) -> String {
        func list(_ items: [String]) -> String { "[" + items.map(JSONText.string).joined(separator: ",") + "]" }
        return JSONText.object([
            ("profile", JSONText.string(group.profile)), ("domain", JSONText.string(group.domain)),
            ("count", "\(group.count)"), ("reasons", list(group.reasons)), ("categories", list(group.categories)),
            ("clients", list(group.clients)), ("first_seen", JSONText.string(StatusText.rfc3339(group.firstSeen))),
            ("last_seen", JSONText.string(StatusText.rfc3339(group.lastSeen))), ("names", "\(group.names)"),
        ])
    }
}

/// Where the state lives for commands that only read it: `--state-dir`, the config's
/// `state_dir`, or `./.phosra-gate` from a checkout without a configuration file.
enum StateDirectory {
    static func path(_ settings: Settings, configFlag: String?) -> String {
        if settings.isSet(Key.stateDir) { return settings[Key.stateDir] }
        let fromCheckout = configFlag == nil && !Files.exists(ConfigFile.defaultPath)
        return fromCheckout ? RunOptions.checkoutStateDirectory : settings[Key.stateDir]
    }
}
