import Blocklists
import Config
import EventLoop
import Gateway
import Glibc
import Policy
import Store
import Sync
import SystemIO

/// `phosra-gate sync`: one cycle with the API (an unconditional fetch, apply to the store,
/// report and ack, queued hits sent) and exit; non-zero with a clear message when the API
/// could not be reached, or when `run` holds the state directory (ask it with SIGUSR1).
enum SyncCommand: Command {
    static let name = "sync"
    static let summary = "one sync cycle with the Phosra API (when run is not running)"
    static let usage =
        "usage: phosra-gate sync [--profile NAME] [--state-dir DIR] [--config FILE] [--api URL] [--ca-file FILE]"

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        do {
            let arguments = try Arguments(command: words, flags: ["--profile": .value])
            guard arguments.operands.isEmpty else { throw GatewayError.usage(usage) }
            let configPath = arguments.flag("--config")
            let settings = try arguments.configuredSettings()
            let state = arguments.stateDirectory(settings)
            let lock: DirectoryLock
            do { lock = try DirectoryLock(directory: state) } catch {
                if case .held(_, let pid) = error {
                    throw GatewayError.usage(
                        "phosra-gate run holds \(state)" + (pid.isEmpty ? "" : " (pid \(pid))")
                            + "; send it SIGUSR1 for a sync now" + (pid.isEmpty ? "" : ": kill -USR1 \(pid)"))
                }
                throw GatewayError.usage("\(error)")
            }
            defer { withExtendedLifetime(lock) {} }
            let registered = DeviceIdentity.registeredProfiles(stateDirectory: state).sorted()
            guard let profile = arguments.flag("--profile") ?? registered.first else {
                throw GatewayError.usage("no registered device in \(state) (run phosra-gate register first)")
            }
            guard registered.contains(profile) else {
                throw GatewayError.flag(
                    "--profile",
                    "\(profile) is not registered in \(state) (registered: \(registered.joined(separator: ", ")))")
            }
            let identity: DeviceIdentity
            do { identity = try DeviceIdentity.load(stateDirectory: state, profile: profile) } catch {
                throw GatewayError.usage("\(error)")
            }
            let store: Store
            do { store = try Store.open(directory: state, now: clock.wall().unixSeconds) } catch {
                throw GatewayError.usage("\(error)")
            }
            defer { store.close() }
            let options = try RunOptions(
                settings, fromCheckout: configPath == nil && !Files.exists(ConfigFile.defaultPath))
            let inputs = try? EngineOptions.listInputs(settings, stateDirectory: state)
            let listed = inputs?.present ?? []
            let services =
                inputs.map { ListsLocator.services(folder: $0.path, stateDirectory: state).catalogue } ?? .empty
            let api = try SyncSetup.api(identity: identity, settings: settings, options: options, clock: clock)
            let log = Logger(format: options.logFormat)
            let sync: ProfileSync
            do {
                sync = try ProfileSync(
                    profile: profile, childID: identity.childID, api: api, store: store,
                    timing: SyncSchedule.Timing(), now: SyncTime(clock),
                    keepOnNoPolicy: settings[Key.onNoPolicy] == .keep,
                    apply: { _ in },
                    evaluate: { policy, rules in
                        EnforcementReport.results(for: policy, rules: rules, listed: listed, services: services)
                    },
                    log: { event, fields in log.info(event, fields) })
            } catch { throw GatewayError.usage("\(error)") }
            guard sync.step(now: SyncTime(clock), force: true) else {
                let error = (try? store.syncState(profile: profile))?.lastError ?? "unknown error"
                throw GatewayError.usage("sync failed: \(error)")
            }
            var reporter = HitReporter()
            let sent = reporter.send(for: sync, store: store, now: SyncTime(clock)) { event, fields in
                log.info(event, fields)
            }
            let version = sync.appliedVersion
            console.out(
                "synced profile \(profile): policy version \(version)"
                    + (sent > 0 ? ", \(sent) hit batch(es) sent" : ""))
            return 0
        } catch {
            console.err("phosra-gate sync: \(error)")
            return 1
        }
    }
}
