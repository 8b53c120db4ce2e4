import EventLoop
import Glibc

/// The composition root: picks the command and wires options to the modules.
public enum Gateway {
    public static let version = "0.1.0"

    static let usage = """
        usage: phosra-gate COMMAND [options]

        commands:
          run         the gateway: DNS proxy on the embedded policy (see: phosra-gate run --help)
          check       explain what the gateway decides for names (see: phosra-gate check --help)
          register    register this gateway with the Phosra API for a child
          sync        one sync cycle with the Phosra API (when run is not running)
          status      what run is doing: policy versions, last sync, queued hits
          hits        recent blocks, newest first
          blocklists  list | compile: the category lists and their compiled file
          bench       matcher: the matcher's speed and memory (SPEC §10)
          version   print the version
        """

    /// Runs `arguments` (without the program name) and returns the exit status.
    public static func main(_ arguments: [String]) -> Int32 {
        let console = StandardConsole()
        guard let command = arguments.first else {
            console.err(usage)
            return 1
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "check":
            if rest.contains("--help") || rest.contains("-h") {
                console.out(CheckCommand.usage)
                return 0
            }
            return CheckCommand.run(rest, console: console)
        case "run":
            if rest.contains("--help") {
                console.out(RunCommand.usage)
                return 0
            }
            // Before any thread exists: signals then reach only the loop's signalfd.
            do { try Signals.block() } catch {
                console.err("phosra-gate run: \(error)")
                return 1
            }
            Signals.ignoreBrokenPipe()
            return RunCommand.run(rest, console: console)
        case "blocklists":
            return BlocklistsCommand.run(rest, console: console)
        case "register", "sync", "status", "hits":
            if rest.contains("--help") {
                console.out(["register": RegisterCommand.usage, "sync": SyncCommand.usage, "status": StatusCommand.usage,
                             "hits": HitsCommand.usage][command]!)
                return 0
            }
            switch command {
            case "register": return RegisterCommand.run(rest, console: console)
            case "sync": return SyncCommand.run(rest, console: console)
            case "status": return StatusCommand.run(rest, console: console)
            default: return HitsCommand.run(rest, console: console)
            }
        case "bench":
            switch rest.first {
            case "matcher":
                if rest.contains("--help") { console.out(BenchMatcherCommand.usage); return 0 }
                return BenchMatcherCommand.run(Array(rest.dropFirst()), console: console)
            case "matcher-child":
                return MatcherChild.run(Array(rest.dropFirst()), console: console)
            default:
                console.err("usage: phosra-gate bench matcher [options]")
                return 1
            }
        case "version", "--version":
            console.out("phosra-gate \(version)")
            return 0
        case "help", "--help", "-h":
            console.out(usage)
            return 0
        default:
            console.err("phosra-gate: unknown command \"\(command)\"\n\(usage)")
            return 1
        }
    }
}
