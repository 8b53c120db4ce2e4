import Blocklists
import Config
import DomainMatch
import EventLoop
import Glibc
import Policy
import Store
import Sync
import Zoneinfo

/// `phosra-gate check`: explains, for each name, what the gateway would do and why.
enum CheckCommand {
    static let usage = """
        usage: phosra-gate check --policy FILE [--lists DIR] [--config FILE] [--at TIME] [--timezone TZ] [--json]
                                 [--always-allow A,B] [--downtime-allow A,B] [--block-bypass true|false] [--api URL] NAME...
               phosra-gate check [--config FILE] (--profile NAME | --client ADDR|MAC|user:NAME) [...] NAME...
        """

    /// Exit status: 0, 2 when some name was invalid, 1 on a usage or input error.
    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        do {
            return try check(words, console: console, clock: clock)
        } catch {
            console.err("phosra-gate check: \(error)")
            return 1
        }
    }

    private static func check(_ words: [String], console: some Console, clock: any Clock) throws(GatewayError) -> Int32
    {
        let arguments: Arguments
        do {
            arguments = try Arguments(
                words,
                commandFlags: [
                    "--config": .value, "--at": .value, "--json": .boolean, "--profile": .value, "--client": .value,
                ])
        } catch {
            throw .config(error)
        }
        guard !arguments.operands.isEmpty else { throw .usage("no NAME given (see phosra-gate check --help)") }
        let settings = try EngineOptions.settings(configFlag: arguments.flag("--config"), flags: arguments.settings)
        let zone = try EngineOptions.zone(settings)
        let instant: Int64
        if let text = arguments.flag("--at") {
            do { instant = try TimeArgument.parse(text, zone: zone) } catch { throw .flag("--at", error.description) }
        } else {
            instant = clock.wall().unixSeconds
        }
        let table = try profiles(settings, arguments: arguments)
        let profile: Profile
        if let name = arguments.flag("--profile") {
            guard let named = table.named(name) else {
                throw .flag(
                    "--profile", "no profile \"\(name)\" (\(table.profiles.map(\.name).joined(separator: ", ")))")
            }
            profile = named
        } else if let text = arguments.flag("--client") {
            let client = try Self.client(text)
            profile = table.choose(client)
            console.err("profile: \(profile.name) (by \(table.why(client)))")
        } else {
            profile = table.choose(.anonymous)
        }
        let rules = profile.rules
        let inputs = try EngineOptions.listInputs(
            settings, stateDirectory: StateDirectory.path(settings, configFlag: arguments.flag("--config")))
        var warnings = inputs.warnings
        let lists = EngineOptions.categoryLists(inputs, settings: settings, writeBack: false, warnings: &warnings)
        let services = ServiceFile.load(folder: inputs.path)
        if let warning = services.warning { warnings.append(warning) }
        let engine = DecisionEngine(
            system: SystemRules(EngineOptions.decisionOptions(settings)),
            categories: lists.categorySet, zone: zone, profiles: table, services: services.catalogue)
        for warning in warnings { console.err("warning: \(warning)") }
        for skipped in engine.system.skipped { console.err("warning: skipped \(skipped)") }
        for note in rules.notes.lines { console.err("note: \(note)") }

        let json = arguments.isSet("--json")
        let local = zone.localDateTime(at: instant)
        var anyInvalid = false
        for operand in arguments.operands {
            let name: DomainName
            do {
                name = try QueryName.parse(operand)
            } catch {
                anyInvalid = true
                console.out(json ? invalidJSON(operand, error) : "\(operand): invalid — \(error)")
                continue
            }
            let decision = engine.decide(name, rules: rules, local: local)
            if json {
                console.out(decisionJSON(name, decision))
            } else {
                let why = Explanation.line(decision, rules: rules, context: .init(instant: instant, zone: zone))
                console.out("\(name): \(decision) — \(why)")
            }
        }
        return anyInvalid ? 2 : 0
    }

    /// The profiles `check` decides for. Without profile sections, `--profile` or
    /// `--client`: the one profile of `--policy FILE` (required). Otherwise every profile
    /// of the configuration with the policy it would enforce now: its local file, the last
    /// good synced policy in the store, or its initial policy.
    static func profiles(_ settings: Settings, arguments: Arguments) throws(GatewayError) -> ProfileTable {
        guard !settings.profiles.isEmpty || arguments.flag("--profile") != nil || arguments.flag("--client") != nil
        else {
            return ProfileTable(single: PolicyRules(try EngineOptions.policy(settings)))
        }
        let state = StateDirectory.path(settings, configFlag: arguments.flag("--config"))
        let plan = try ProfilePlan.from(settings, registered: DeviceIdentity.registeredProfiles(stateDirectory: state))
        let store = try? Store.openReadOnly(directory: state)
        defer { store?.close() }
        var profiles: [Profile] = []
        for source in plan.sources {
            let rules: PolicyRules
            if let path = source.policyPath {
                rules = PolicyRules(try PolicyFile.load(path))
            } else if let stored = try? store?.policy(profile: source.name),
                let policy = try? CompiledPolicy.decode(stored.json)
            {
                rules = PolicyRules(policy)
            } else {
                rules = source.initialPolicy.rules
            }
            profiles.append(Profile(name: source.name, rules: rules))
        }
        return ProfileTable(roster: plan.roster, profiles: profiles)
    }

    /// `--client`: an address, a MAC address, or `user:NAME` (a proxy user).
    static func client(_ text: String) throws(GatewayError) -> Client {
        if text.hasPrefix("user:") { return Client(proxyUser: String(text.dropFirst(5))) }
        if let mac = MACAddress(text) { return Client(mac: mac) }
        if let address = IPAddress(text) { return Client(address: address) }
        throw .flag("--client", "\"\(text)\" is not an address, a MAC address or user:NAME")
    }

    static func decisionJSON(_ name: DomainName, _ decision: Decision) -> String {
        JSONText.object([
            ("name", JSONText.string(name.description)),
            ("action", JSONText.string(decision.action.rawValue)),
            ("reason", JSONText.string(decision.reason.rawValue)),
            ("rule", JSONText.string(decision.rule)),
            ("category", JSONText.string(decision.category?.id)),
            ("target", JSONText.string(decision.target)),
        ])
    }

    static func invalidJSON(_ operand: String, _ error: NameError) -> String {
        JSONText.object([
            ("name", JSONText.string(operand)),
            ("action", JSONText.string("invalid")),
            ("reason", JSONText.string(error.description)),
            ("rule", "null"),
            ("category", "null"),
            ("target", "null"),
        ])
    }
}
