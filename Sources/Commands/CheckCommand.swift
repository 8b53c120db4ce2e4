import Blocklists
import Config
import DomainMatch
import EventLoop
import Gateway
import Glibc
import Policy
import Store
import Sync
import SystemIO
import Zoneinfo

/// `phosra-gate check`: explains, for each name, what the gateway would do and why.
enum CheckCommand: Command {
    static let name = "check"
    static let summary = "explain what the gateway decides for names"
    static let usage = """
        usage: phosra-gate check --policy FILE [--lists DIR] [--config FILE] [--at TIME] [--timezone TZ] [--json]
                                 [--always-allow A,B] [--downtime-allow A,B] [--block-bypass true|false] [--api URL] NAME...
               phosra-gate check [--config FILE] (--profile NAME | --client ADDR|MAC|user:NAME) [...] NAME...
               [--budget-used SERVICE=MINUTES,...]  minutes already spent today (default: what run stored);
                                                    daily=MINUTES: minutes online, for the daily limit
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
        let arguments = try Arguments(
            command: words,
            flags: [
                "--at": .value, "--json": .boolean, "--profile": .value, "--client": .value, "--budget-used": .value,
            ])
        guard !arguments.operands.isEmpty else { throw .usage("no NAME given (see phosra-gate check --help)") }
        let settings = try arguments.configuredSettings()
        let zone = try EngineOptions.zone(settings)
        let instant: Int64
        if let text = arguments.flag("--at") {
            do { instant = try TimeArgument.parse(text, zone: zone) } catch { throw .flag("--at", error.description) }
        } else {
            instant = clock.wall().unixSeconds
        }
        let table = try profiles(settings, arguments: arguments, now: instant)
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
            settings, stateDirectory: arguments.stateDirectory(settings))
        var warnings = inputs.warnings
        let lists = EngineOptions.categoryLists(inputs, settings: settings, writeBack: false, warnings: &warnings)
        let services = ListsLocator.services(
            folder: inputs.path, stateDirectory: arguments.stateDirectory(settings))
        if let warning = services.warning { warnings.append(warning) }
        let engine = DecisionEngine(
            system: SystemRules(EngineOptions.decisionOptions(settings)),
            categories: lists.categorySet, zone: zone, profiles: table, services: services.catalogue)
        for warning in warnings { console.err("warning: \(warning)") }
        for skipped in engine.system.skipped { console.err("warning: skipped \(skipped)") }
        for note in rules.notes.lines { console.err("note: \(note)") }

        let json = arguments.isSet("--json")
        let local = zone.localDateTime(at: instant)
        let usage = try budgetUsage(
            arguments, settings: settings, profile: profile.name, day: local.daysSince1970, services: engine.services)
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
            let decided = Profile(name: profile.name, rules: rules, usage: usage, overrides: profile.overrides)
            let decision = engine.decide(name, profile: decided, at: instant, local: local)
            let budget = Budget(name, engine: engine, rules: rules, usage: usage, day: local.daysSince1970)
            let daily = DailyLimit(decided, day: local.daysSince1970, at: instant)
            if json {
                console.out(decisionJSON(name, decision, budget: budget, daily: daily))
            } else {
                var why = Explanation.line(
                    decision, name: name, rules: rules,
                    context: .init(instant: instant, zone: zone, overrides: profile.overrides))
                if let budget { why += "; \(budget)" }
                if let daily { why += "; \(daily)" }
                console.out("\(name): \(decision) — \(why)")
            }
        }
        return anyInvalid ? 2 : 0
    }

    /// The profiles `check` decides for. Without profile sections, `--profile` or
    /// `--client`: the one profile of `--policy FILE` (required). Otherwise every profile
    /// of the configuration with the policy it would enforce now: its local file, the last
    /// good synced policy in the store, or its initial policy.
    /// The parent's overrides and device assignments stored by `run` count as they would at `now`.
    static func profiles(_ settings: Settings, arguments: Arguments, now: Int64) throws(GatewayError) -> ProfileTable {
        let state = arguments.stateDirectory(settings)
        let store = try? Store.openReadOnly(directory: state)
        defer { store?.close() }
        let parent = store.flatMap { try? ParentState.load(from: $0, now: now) } ?? .empty
        guard !settings.profiles.isEmpty || arguments.flag("--profile") != nil || arguments.flag("--client") != nil
        else {
            let single = Profile(name: "default", rules: PolicyRules(try EngineOptions.policy(settings)))
            return ProfileTable(
                roster: .single(), profiles: [parent.applied(to: single)], assignments: parent.assignments)
        }
        let plan = try ProfilePlan.from(settings, registered: DeviceIdentity.registeredProfiles(stateDirectory: state))
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
            profiles.append(parent.applied(to: Profile(name: source.name, rules: rules)))
        }
        return ProfileTable(roster: plan.roster, profiles: profiles, assignments: parent.assignments)
    }

    /// `--client`: an address, a MAC address, or `user:NAME` (a proxy user).
    static func client(_ text: String) throws(GatewayError) -> Client {
        if text.hasPrefix("user:") { return Client(proxyUser: String(text.dropFirst(5))) }
        if let mac = MACAddress(text) { return Client(mac: mac) }
        if let address = IPAddress(text) { return Client(address: address) }
        throw .flag("--client", "\"\(text)\" is not an address, a MAC address or user:NAME")
    }

    static func decisionJSON(
        _ name: DomainName, _ decision: Decision, budget: Budget? = nil, daily: DailyLimit? = nil
    ) -> String {
        var fields = [
            ("name", JSONText.string(name.description)),
            ("action", JSONText.string(decision.action.rawValue)),
            ("reason", JSONText.string(decision.reason.rawValue)),
            ("rule", JSONText.string(decision.rule)),
            ("category", JSONText.string(decision.category?.id)),
            ("target", JSONText.string(decision.target?.description)),
        ]
        if let budget {
            fields.append(
                (
                    "budget",
                    JSONText.object([
                        ("service", JSONText.string(budget.service)), ("daily_minutes", "\(budget.daily)"),
                        ("used", "\(budget.used)"), ("left", "\(budget.left)"),
                    ])
                ))
        }
        if let daily {
            fields.append(
                (
                    "daily_limit",
                    JSONText.object([
                        ("used_minutes", "\(daily.used)"), ("limit_minutes", "\(daily.limit)"),
                        ("left_minutes", "\(daily.left)"),
                    ])
                ))
        }
        return JSONText.object(fields)
    }

    /// The profile's daily limit as `check` shows it: minutes online today against the
    /// limit and the parent's bonus minutes of the day.
    struct DailyLimit: CustomStringConvertible {
        let used: Int
        let limit: Int
        var left: Int { max(0, limit - used) }

        init?(_ profile: Profile, day: Int, at instant: Int64) {
            guard profile.rules.dailyLimitMinutes > 0 else { return nil }
            used = profile.usage.onlineMinutes(day: day)
            limit = profile.rules.dailyLimitMinutes + profile.overrides.dailyBonusMinutes(day: day, at: instant)
        }

        var description: String { "daily limit: \(used) of \(limit) minutes online today, \(left) left" }
    }

    /// A name's app budget as `check` shows it: the service, its daily minutes, and how
    /// many are spent today.
    struct Budget: CustomStringConvertible {
        let service: String
        let daily: Int
        let used: Int
        var left: Int { max(0, daily - used) }

        init?<M: NameMatcher>(
            _ name: DomainName, engine: DecisionEngine<M>, rules: PolicyRules, usage: ServiceUsage, day: Int
        ) {
            guard let found = engine.services.match(name) else { return nil }
            let app = engine.services.services[found.service]
            guard let daily = rules.dailyMinutes(for: app) else { return nil }
            service = app.id
            self.daily = daily
            used = usage.minutes(app.id, day: day)
        }

        var description: String {
            "budget \(service): \(used) of \(daily) minutes used today, \(left) left"
        }
    }

    /// The minutes spent today per service: what `run` stored for the profile, with
    /// `--budget-used` (`tiktok=55m,youtube=1h`) over it.
    static func budgetUsage(
        _ arguments: Arguments, settings: Settings, profile: String, day: Int, services: ServiceCatalogue
    ) throws(GatewayError) -> ServiceUsage {
        var minutes: [String: Int] = [:]
        let state = arguments.stateDirectory(settings)
        if let store = try? Store.openReadOnly(directory: state) {
            defer { store.close() }
            for row in (try? store.serviceMinutes(day: day, profile: profile)) ?? [] {
                minutes[row.service] = MinuteSet(bytes: row.minutes)?.count ?? 0
            }
        }
        if let text = arguments.flag("--budget-used") {
            for item in text.split(separator: ",") {
                let parts = item.split(separator: "=", maxSplits: 1).map { $0.filter { $0 != " " } }
                guard parts.count == 2, let spent = minutesValue(parts[1]) else {
                    throw .flag("--budget-used", "\"\(item)\" is not SERVICE=MINUTES (tiktok=55m, youtube=1h30m)")
                }
                if parts[0] == "daily" {
                    minutes[ServiceUsage.online] = spent
                    continue
                }
                guard let index = services.service(named: parts[0]) else {
                    throw .flag("--budget-used", "no service \"\(parts[0])\" (see phosra-gate services)")
                }
                minutes[services.services[index].id] = spent
            }
        }
        return ServiceUsage(day: day, minutes: minutes)
    }

    /// `55`, `55m`, `1h`, `1h30m` → minutes (at most a day's 1,500 counted minutes).
    static func minutesValue(_ text: String) -> Int? {
        var total = 0
        var number = ""
        var sawUnit = false
        for character in text.lowercased() {
            if character.isASCII, character.isNumber {
                number.append(character)
                guard number.count <= 4 else { return nil }
            } else if character == "h" || character == "m", let value = Int(number) {
                total += character == "h" ? value * 60 : value
                number = ""
                sawUnit = true
            } else {
                return nil
            }
        }
        if !number.isEmpty {
            guard !sawUnit, let value = Int(number) else { return nil }
            total += value
        } else if !sawUnit {
            return nil
        }
        return total <= MinuteSet.slots ? total : nil
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
