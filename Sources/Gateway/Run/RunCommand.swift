import Blocklists
import Config
import DNSProxy
import EventLoop
import Policy
import SystemIO

/// `phosra-gate run`: the daemon (SPEC §4, §8).
enum RunCommand {
    static let usage = """
        usage: phosra-gate run [--config FILE] [--policy FILE] [--lists DIR] [--state-dir DIR] [--dns-listen ADDR:PORT,…]
                               [--upstream SPEC,…] [--timezone TZ] [--block-mode MODE] [--block-ttl DURATION]
                               [--rate-limit N] [--allow-clients CIDR,…] [--ca-file FILE] [any other key as --key value]
        """

    static func run(_ words: [String], console: some Console) -> Int32 {
        do {
            let arguments: Arguments
            do { arguments = try Arguments(words, commandFlags: ["--config": .value]) } catch { throw GatewayError.config(error) }
            guard arguments.operands.isEmpty else { throw GatewayError.usage("unexpected \"\(arguments.operands[0])\"") }
            let configPath = arguments.flag("--config")
            let fromCheckout = configPath == nil && !Files.exists(ConfigFile.defaultPath)
            let settings = try EngineOptions.settings(configFlag: configPath, flags: arguments.settings)
            let options = try RunOptions(settings, fromCheckout: fromCheckout)
            let log = Logger(format: options.logFormat)
            let lock: DirectoryLock
            do { lock = try DirectoryLock(directory: options.stateDirectory) } catch {
                throw GatewayError.usage("--state-dir: \(error)")
            }
            let policyPath = settings.string("policy")
            let policy = try EngineOptions.policy(settings)
            let builder = try makeBuilder(settings, options: options, log: log)
            let daemon = try Daemon(options: options, builder: builder, policy: policy, policyPath: policyPath, log: log,
                                    hits: DiscardingHitRecorder())
            log.info("policy_loaded", [("path", policyPath), ("version", "\(policy.version)"), ("policy_id", policy.policyID)])
            daemon.reloadRequested = { [weak daemon] in
                guard let daemon else { return }
                reload(daemon, configPath: configPath, flags: arguments.settings, running: options, log: log)
            }
            try daemon.start(options: options, upstream: try Upstreams.factory(options: options, log: log))
            daemon.wait()
            withExtendedLifetime(lock) {}
            return 0
        } catch {
            console.err("phosra-gate run: \(error)")
            return 1
        }
    }

    /// Zone, category lists (from the compiled cache when it matches) and decision keys.
    static func makeBuilder(_ settings: Settings, options: RunOptions, log: Logger) throws(GatewayError) -> SnapshotBuilder {
        let zone = try EngineOptions.zone(settings)
        let inputs = try EngineOptions.listInputs(settings)
        var warnings = inputs.warnings
        let lists = ListCache.open(inputs, stateDirectory: options.stateDirectory, writeBack: true, warnings: &warnings)
        for warning in warnings { log.warn("lists", [("warning", warning)]) }
        log.info("lists_loaded", [("path", inputs.path), ("names", "\(lists.trie.nameCount)"),
                                  ("categories", lists.present.sorted().map(\.id).joined(separator: ","))])
        return SnapshotBuilder(options: options, decisions: EngineOptions.decisionOptions(settings), zone: zone, lists: lists)
    }

    /// SIGHUP: configuration and lists again; a bad configuration keeps the running one.
    /// Listen addresses and the state directory need a restart.
    static func reload(_ daemon: Daemon, configPath: String?, flags: Settings, running: RunOptions, log: Logger) {
        do {
            let settings = try EngineOptions.settings(configFlag: configPath, flags: flags)
            let options = try RunOptions(settings, fromCheckout: configPath == nil && !Files.exists(ConfigFile.defaultPath))
            if options.dnsListen != running.dnsListen || options.stateDirectory != running.stateDirectory {
                log.warn("reload", [("note", "dns_listen and state_dir change only on restart")])
            }
            let builder = try makeBuilder(settings, options: options, log: log)
            let policy = try EngineOptions.policy(settings)
            daemon.reload(builder: builder, policy: policy)
            log.info("reloaded", [("version", "\(policy.version)")])
        } catch {
            log.error("reload_failed", [("error", "\(error)"), ("note", "keeping the running configuration")])
        }
    }
}
