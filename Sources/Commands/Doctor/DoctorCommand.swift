import Config
import DNSUpstream
import DomainMatch
import EventLoop
import Firewall
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

/// `phosra-gate doctor`: checks a running gateway the way a parent needs it checked, one
/// line per check with the fix when it fails (docs/doctor.md). It reads the same
/// configuration file and flags as `run`, so it looks where `run` listens, forwards and
/// keeps its state. Exit status 0 when no check failed, else 1.
enum DoctorCommand: Command {
    static let name = "doctor"
    static let summary = "check a running gateway, one line per check with the fix (docs/doctor.md)"
    static let usage = """
        usage: phosra-gate doctor [--json] [--config FILE] [any key of run as --key value]
        """

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        let arguments: Arguments
        do { arguments = try Arguments(words, commandFlags: ["--json": .boolean, "--config": .value]) } catch {
            console.err("phosra-gate doctor: \(error)")
            return 1
        }
        guard arguments.operands.isEmpty else {
            console.err("phosra-gate doctor: unexpected \"\(arguments.operands[0])\"\n\(usage)")
            return 1
        }
        let checks = Self.checks(
            configPath: arguments.flag("--config"), flags: arguments.settings, clock: clock, testClock: testClock)
        if arguments.isSet("--json") {
            console.out(DoctorReport.json(checks))
        } else {
            checks.map(DoctorReport.line).forEach(console.out)
        }
        return DoctorReport.exitStatus(checks)
    }

    /// Every check, in the order a parent would look: is it running, does it answer, does
    /// it filter, can it resolve, is its time right, can it sync, is the LAN held, does the
    /// parent's page have a certificate that loads, are its lists fresh, is another router
    /// handing out DNS servers.
    /// Whether the test clock variable is set: the kernel's clock is then not the one in use.
    static var testClock: Bool {
        getenv(Gateway.testClockVariable).map { String(cString: $0) }.map { !$0.isEmpty } ?? false
    }

    static func checks(configPath: String?, flags: Settings, clock: any Clock, testClock: Bool) -> [DoctorCheck] {
        let fromCheckout = configPath == nil && !Files.exists(ConfigFile.defaultPath)
        let settings: Settings
        let options: RunOptions
        do {
            settings = try EngineOptions.settings(configFlag: configPath, flags: flags)
            options = try RunOptions(settings, fromCheckout: fromCheckout)
        } catch {
            return [
                .fail("configuration", "\(error)", fix: "correct it: phosra-gate run does not start with it either")
            ]
        }
        let now = clock.wall().unixSeconds
        let state = options.stateDirectory
        let store = try? Store.openReadOnly(directory: state)
        let alive = DirectoryLock.isHeld(directory: state)
        let heartbeat = (try? store?.heartbeat()) ?? nil
        let syncStates = (try? store?.allSyncStates()) ?? []
        let plan = try? ProfilePlan.from(
            settings, registered: DeviceIdentity.registeredProfiles(stateDirectory: state))

        var checks = [DoctorVerdict.daemon(alive: alive, heartbeat: heartbeat, now: now, stateDirectory: state)]
        var canary: (answer: DoctorVerdict.CanaryAnswer, client: IPAddress)?
        for (kind, listen) in listeners(options, heartbeat: alive ? heartbeat : nil) {
            guard kind == "dns" else {
                checks.append(DoctorVerdict.listener(kind, "\(listen)", DoctorProbe.connects(to: listen, clock: clock)))
                continue
            }
            for tcp in [false, true] {
                let kind = tcp ? "dns tcp" : "dns udp"
                switch DoctorProbe.askCanary(at: listen, tcp: tcp, clock: clock) {
                case .success(let asked):
                    checks.append(DoctorVerdict.listener(kind, "\(listen)", .answered))
                    if canary == nil { canary = (DoctorVerdict.canaryAnswer(asked.reply), asked.client) }
                case .failure(let failure):
                    checks.append(DoctorVerdict.listener(kind, "\(listen)", .failed(failure.reason)))
                }
            }
        }
        let profile = canary.map { profileName(plan, client: $0.client) } ?? "?"
        checks.append(
            DoctorVerdict.canary(
                canary?.answer, client: canary.map { "\($0.client)" } ?? "?", profile: profile,
                state: syncStates.first { $0.profile == profile }))
        checks += upstreams(options, clock: clock)
        checks.append(DoctorVerdict.clock(testClock ? .testClock : DoctorProbe.kernelClock()))
        checks += api(plan, settings: settings, options: options, states: syncStates, clock: clock)
        checks.append(firewall(settings, fromCheckout: fromCheckout))
        checks.append(web(settings, stateDirectory: state, alive: alive, now: now))
        checks.append(
            DoctorVerdict.notifications(
                host: settings[Key.notifyURL]?.authority, queue: try? store?.noticeQueueState(), now: now))
        checks.append(
            DoctorVerdict.sharedStore(
                place: settings[Key.sharedStore].map { SharedSync.place($0) },
                state: (try? store?.sharedState()) ?? nil,
                waiting: (try? store?.unsharedCount()) ?? 0, alive: alive, now: now))
        let folder = settings[Key.lists].isEmpty ? ListsLocator.defaultFolder() : settings[Key.lists]
        let folders = (folder.map { [$0] } ?? []) + [ListsLocator.stateFolder(state)]
        checks.append(
            DoctorVerdict.lists(newest: DoctorProbe.newestList(in: folders), folders: folders, now: now))
        checks.append(
            .skip(
                "router_advertisements",
                "not checked: another router's advertisements are seen only by listening on the LAN for them",
                fix: "rdisc6 LAN-INTERFACE (package ndisc6) lists the routers and the DNS servers (RDNSS) they name"))
        return checks
    }

    /// The checks the daemon runs on itself every few minutes and tells the parent of when
    /// they fail (`trouble`): those that look at what it cannot see from inside
    /// otherwise. Not here: its own listeners (a daemon that runs holds them, and systemd's
    /// watchdog restarts a wedged one), the API (the sync says), the lists' age (watched
    /// already) and the firewall (read from `firewall watch`'s file by the daemon).
    static func daemonChecks(_ settings: Settings, _ options: RunOptions, clock: any Clock) -> [FailingCheck] {
        var found: [(DoctorCheck, subject: String)] = zip(upstreams(options, clock: clock), options.upstreams).map {
            ($0, "\($1)")
        }
        found.append((DoctorVerdict.clock(testClock ? .testClock : DoctorProbe.kernelClock()), ""))
        found.append(
            (web(settings, stateDirectory: options.stateDirectory, alive: true, now: clock.wall().unixSeconds), ""))
        return found.filter { $0.0.outcome == .fail }.map { check, subject in
            FailingCheck(check: check.check, subject: subject, what: check.what, fix: check.fix ?? "")
        }
    }

    /// What `run` listens on: its heartbeat's lines (`dns 127.0.0.1:53`) while it runs,
    /// else the configuration's.
    static func listeners(_ options: RunOptions, heartbeat: Heartbeat?) -> [(kind: String, listen: ListenAddress)] {
        guard let heartbeat else {
            return options.dnsListen.map { ("dns", $0) } + options.proxyListen.map { ("proxy", $0) }
                + options.transparentListen.map { ("transparent", $0) }
        }
        return heartbeat.listeners.compactMap { line in
            let words = line.split(separator: " ")
            guard words.count == 2, let listen = ListenAddress(String(words[1])) else { return nil }
            return (String(words[0]), listen)
        }
    }

    /// The profile the configuration gives `client`; devices are known by address here
    /// (this host has no neighbour entry of its own).
    static func profileName(_ plan: ProfilePlan?, client: IPAddress) -> String {
        guard let plan else { return "?" }
        let table = ProfileTable(
            roster: plan.roster, profiles: plan.sources.map { Profile(name: $0.name, rules: .unfiltered) })
        return table.choose(Client(address: client)).name
    }

    static func upstreams(_ options: RunOptions, clock: any Clock) -> [DoctorCheck] {
        var context: TLSContext?
        if options.caFile != nil || options.upstreams.contains(where: { $0.transport == .tls }) {
            do { context = try TLSContext(caFile: options.caFile) } catch {
                return [.fail("upstream", "no TLS context: \(error)", fix: "check ca_file")]
            }
        }
        // A little more than `run` allows: a slow answer is still an answer here.
        let timeout = Nanoseconds(max(options.upstreamTimeout, 2000)) * 1_000_000
        let probes = DoctorProbe.upstreams(options.upstreams, tls: context, timeout: timeout, clock: clock)
        return zip(options.upstreams, probes).map { DoctorVerdict.upstream("\($0)", $1) }
    }

    /// One line per profile that syncs: its key tried against the API.
    static func api(
        _ plan: ProfilePlan?, settings: Settings, options: RunOptions, states: [SyncState], clock: any Clock
    ) -> [DoctorCheck] {
        guard let plan else { return [] }
        let registered = Set(DeviceIdentity.registeredProfiles(stateDirectory: options.stateDirectory))
        var checks: [DoctorCheck] = []
        for source in plan.sources where source.policyPath == nil {
            guard registered.contains(source.name) else {
                checks.append(
                    .skip(
                        "api", "profile \(source.name) is not registered (it enforces initial_policy)",
                        fix: "phosra-gate register --profile \(source.name)"))
                continue
            }
            let state = states.first { $0.profile == source.name }
            do {
                let identity = try DeviceIdentity.load(stateDirectory: options.stateDirectory, profile: source.name)
                let api = try SyncSetup.api(
                    identity: identity, settings: settings, options: options, clock: clock,
                    connectTimeout: .seconds(5), requestTimeout: .seconds(10))
                let version = state?.appliedVersion ?? 0
                let fetch = api.fetchPolicy(sinceVersion: version > 0 ? version : nil)
                checks.append(DoctorVerdict.api(profile: source.name, fetch: fetch, state: state))
            } catch {
                checks.append(
                    .fail(
                        "api", "profile \(source.name): \(error)",
                        fix: "register again: phosra-gate register --profile \(source.name)"))
            }
        }
        if checks.isEmpty { checks.append(.skip("api", "not used: every profile has a policy file")) }
        return checks
    }

    /// The page's certificate loaded with its key, as `run` loads it.
    static func web(_ settings: Settings, stateDirectory: String, alive: Bool, now: Int64) -> DoctorCheck {
        let files = PageSetup.certificateFiles(settings, stateDirectory: stateDirectory)
        let certificate: DoctorVerdict.WebCertificate
        if !files.parents && !Files.exists(files.certificate) {
            certificate = .absent
        } else {
            do {
                let loaded = try TLSServerContext(certificateFile: files.certificate, keyFile: files.key)
                certificate = .loaded(fingerprint: loaded.fingerprintSHA256, notAfter: loaded.notAfter)
            } catch {
                certificate = .unreadable("\(error)")
            }
        }
        return DoctorVerdict.web(
            passwordSet: Files.exists(stateDirectory + "/" + WebPassword.fileName), alive: alive,
            path: files.certificate, parents: files.parents, certificate: certificate, now: now)
    }

    static func firewall(_ settings: Settings, fromCheckout: Bool) -> DoctorCheck {
        guard !settings[Key.lanInterfaces].isEmpty else {
            return .skip(
                "firewall", "not used: lan_interfaces is not set, so nothing keeps devices from other DNS servers",
                fix: "set lan_interfaces to keep the LAN on the gateway (docs/network.md)")
        }
        var warnings: [String] = []
        let expected: String
        do {
            let model = try FirewallCommand.model(settings, fromCheckout: fromCheckout, warnings: &warnings)
            expected = try Ruleset.fingerprint(model)
        } catch {
            return .fail("firewall", "phosra-gate firewall print fails: \(error)", fix: "correct the configuration")
        }
        return DoctorVerdict.firewall(DoctorProbe.firewallTable(), expected: expected)
    }
}
