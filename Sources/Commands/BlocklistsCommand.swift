import Blocklists
import Config
import DomainMatch
import EventLoop
import Gateway
import Policy
import SystemIO

/// `phosra-gate blocklists list|compile|update`: what the lists folder holds, and building
/// its compiled file into the state directory's cache (where `run` and `check` find it) or
/// to a file; `update` is `ListUpdateCommand`.
enum BlocklistsCommand: Command {
    static let name = "blocklists"
    static let summary = "list | compile | update: the category lists, their compiled file, downloads"
    static let subcommands: [any Command.Type] = [ListUpdateCommand.self]
    static let usage = """
        usage: phosra-gate blocklists list [--lists DIR]
               phosra-gate blocklists compile [--lists DIR] [--state-dir DIR | --out FILE]
               phosra-gate blocklists update [--manifest FILE] [--state-dir DIR] [--force] (see update --help)
        """

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        guard let verb = words.first, ["list", "compile"].contains(verb) else {
            console.err(usage)
            return 1
        }
        do {
            let arguments = try Arguments(command: Array(words.dropFirst()), flags: ["--out": .value])
            guard arguments.operands.isEmpty else {
                throw GatewayError.usage("unexpected \"\(arguments.operands[0])\"\n" + usage)
            }
            let settings = try arguments.configuredSettings()
            let inputs = try EngineOptions.listInputs(settings, stateDirectory: arguments.stateDirectory(settings))
            for warning in inputs.warnings { console.err("warning: \(warning)") }
            var warnings: [String] = []
            let start = clock.now()
            var progress = Progress(total: inputs.totalBytes, label: "compiling")
            let lists = CategoryLists.build(inputs, warnings: &warnings) { done, _ in progress.update(done) }
            progress.finish()
            let seconds = clock.seconds(since: start)
            for warning in warnings { console.err("warning: \(warning)") }
            if verb == "list" {
                for category in Category.allCases { console.out(line(category, lists.stats[category], inputs)) }
                return 0
            }
            let target: String
            if let out = arguments.flag("--out") {
                guard !settings.isSet(Key.stateDir) else {
                    throw GatewayError.usage("give --state-dir or --out, not both")
                }
                target = out
            } else {
                target = ListCache.path(stateDirectory: settings[Key.stateDir])
            }
            do { try ListCache.write(lists.trie, to: target) } catch { throw GatewayError.usage("\(error)") }
            let skipped = lists.stats.values.reduce(0) { $0 + $1.skipped }
            console.out(
                "compiled \(lists.trie.nameCount) names from \(inputs.files.count) files (\(skipped) lines skipped) "
                    + "into \(target) (\(lists.trie.bytes.count) bytes) in \((seconds * 1000).rounded() / 1000) s")
            return 0
        } catch {
            console.err("phosra-gate blocklists: \(error)")
            return 1
        }
    }

    private static func line(_ category: Category, _ stats: ListStats?, _ inputs: ListInputs) -> String {
        let files = inputs.files.filter { $0.category == category }.count
        guard let stats, files > 0 else { return "\(category.id): no list" }
        return
            "\(category.id): \(files) file(s), \(stats.names) names, \(stats.ipEntries) addresses, \(stats.skipped) lines skipped"
    }
}
