import Gateway
import SystemIO

/// One command of `phosra-gate` (`run`, `check`, …). The table in `CLI.commands` lists
/// them; `CLI.main` finds one by its name, gives `--help` and `-h` the same answer for
/// every command (its usage, exit 0), and otherwise calls `run` with the words after the
/// name. The overview (`phosra-gate help`) is made from the table.
protocol Command: Sendable {
    /// The word that names it on the command line.
    static var name: String { get }
    /// One line for the overview; empty for a command the overview leaves out (a helper
    /// process of another command).
    static var summary: String { get }
    /// What `--help` prints.
    static var usage: String { get }
    /// Commands named by the next word (`blocklists update`), each with its own usage.
    static var subcommands: [any Command.Type] { get }
    /// Runs with the words after the command's name; returns the exit status.
    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32
}

extension Command {
    static var subcommands: [any Command.Type] { [] }
}

extension CLI {
    /// Every command, in the overview's order.
    static let commands: [any Command.Type] = [
        RunCommand.self, CheckCommand.self, RegisterCommand.self, SyncCommand.self, StatusCommand.self,
        HitsCommand.self, BlocklistsCommand.self, FirewallCommand.self, ServicesCommand.self, BenchCommand.self,
        PasswdCommand.self, WebPasswordCommand.self, DoctorCommand.self, VersionCommand.self,
    ]

    /// The overview, from the table.
    static var usage: String {
        let shown = commands.filter { !$0.summary.isEmpty }
        let width = shown.map { $0.name.count }.max() ?? 0
        let lines = shown.map { command in
            "  " + command.name + String(repeating: " ", count: width - command.name.count + 2) + command.summary
        }
        return
            (["usage: phosra-gate COMMAND [options]", "", "commands:"] + lines + [
                "", "phosra-gate COMMAND --help shows a command's options.",
            ]).joined(separator: "\n")
    }

    /// The command `words` name, following subcommands as deep as they go, with the words
    /// after its name; nil when the first word names none.
    static func find(_ words: [String], in table: [any Command.Type]) -> (any Command.Type, [String])? {
        guard let first = words.first, let command = table.first(where: { $0.name == first }) else { return nil }
        let rest = Array(words.dropFirst())
        if let deeper = find(rest, in: command.subcommands) { return deeper }
        return (command, rest)
    }
}

/// `phosra-gate version`.
enum VersionCommand: Command {
    static let name = "version"
    static let summary = "print the version"
    static let usage = "usage: phosra-gate version"

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        guard words.isEmpty else {
            console.err(usage)
            return 1
        }
        console.out("phosra-gate \(Gateway.version)")
        return 0
    }
}

/// `phosra-gate bench`: only its subcommands do anything.
enum BenchCommand: Command {
    static let name = "bench"
    static let summary = "matcher: the matcher's speed and memory (docs/benchmarks.md#targets)"
    static let usage = "usage: phosra-gate bench matcher [options] (see: phosra-gate bench matcher --help)"
    static let subcommands: [any Command.Type] = [BenchMatcherCommand.self, MatcherChild.self]

    static func run(_ words: [String], console: some Console, clock: any Clock) -> Int32 {
        console.err(usage)
        return 1
    }
}
