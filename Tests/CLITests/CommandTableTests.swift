import TestSupport
import Testing

@testable import Commands
@testable import Gateway

/// The command table, through the real binary: every command and subcommand answers
/// `--help` and `-h` alike (its usage, exit 0, nothing run), the overview lists every
/// command the table shows, and an unknown command is an error that shows the overview.
@Suite(.blocking) struct CommandTableTests {
    /// Every command's words, subcommands included (`blocklists update`).
    static var paths: [[String]] {
        func walk(_ table: [any Command.Type], _ prefix: [String]) -> [[String]] {
            table.flatMap { command in [prefix + [command.name]] + walk(command.subcommands, prefix + [command.name]) }
        }
        return walk(CLI.commands, [])
    }

    @Test(arguments: paths)
    func helpAndHAreTheSameForEveryCommand(words: [String]) throws {
        let command = try #require(CLI.find(words, in: CLI.commands)?.0)
        for flag in ["--help", "-h"] {
            let result = try GateCommand.run(words + [flag])
            #expect(result.status == 0, "\(words) \(flag): \(result.stderr)")
            #expect(result.stdout == command.usage + "\n", "\(words) \(flag)")
            #expect(result.stderr.isEmpty, "\(words) \(flag)")
        }
    }

    @Test func theOverviewListsTheTable() throws {
        let help = try GateCommand.run(["help"])
        #expect(help.status == 0)
        for command in CLI.commands where !command.summary.isEmpty {
            #expect(help.stdout.contains("  \(command.name)  "), "\(command.name)")
            #expect(help.stdout.contains(command.summary), "\(command.name)")
        }
        #expect(!help.stdout.contains("matcher-child"), "a helper process is not offered")
        #expect(try GateCommand.run(["--help"]).stdout == help.stdout)
        let unknown = try GateCommand.run(["frobnicate"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.hasPrefix("phosra-gate: unknown command \"frobnicate\"\n" + CLI.usage))
        let none = try GateCommand.run([])
        #expect(none.status == 1 && none.stderr == CLI.usage + "\n")
        #expect(try GateCommand.run(["version"]).stdout == "phosra-gate \(Gateway.version)\n")
    }
}
