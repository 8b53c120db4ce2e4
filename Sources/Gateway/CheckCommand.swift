import Blocklists
import Config
import DomainMatch
import EventLoop
import Glibc
import Policy
import Zoneinfo

/// `phosra-gate check`: explains, for each name, what the gateway would do and why.
enum CheckCommand {
    static let usage = """
        usage: phosra-gate check --policy FILE [--lists DIR] [--config FILE] [--at TIME] [--timezone TZ] [--json]
                                 [--always-allow A,B] [--downtime-allow A,B] [--block-bypass true|false] [--api URL] NAME...
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
            arguments = try Arguments(words, commandFlags: ["--config": .value, "--at": .value, "--json": .boolean])
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
        let policy = try EngineOptions.policy(settings)
        let inputs = try EngineOptions.listInputs(settings)
        var warnings = inputs.warnings
        let lists = EngineOptions.categoryLists(inputs, settings: settings, writeBack: false, warnings: &warnings)
        let rules = PolicyRules(policy)
        let engine = DecisionEngine(
            system: SystemRules(EngineOptions.decisionOptions(settings)),
            categories: lists.categorySet, zone: zone,
            profiles: ProfileTable(single: rules))
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
