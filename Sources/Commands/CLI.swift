import Gateway
import Glibc
import SystemIO
import Zoneinfo

/// The command line: one prologue every command shares, then the command of the table
/// (`Command.swift`).
public enum CLI {
    /// Runs `arguments` (without the program name) and returns the exit status: the one
    /// prologue every command shares (the clock, `--help`), then the command.
    public static func main(_ arguments: [String]) -> Int32 {
        let console = StandardConsole()
        let clock: any Clock
        do { clock = try makeClock(testClock: getenv(Gateway.testClockVariable).map { String(cString: $0) }) } catch {
            console.err("phosra-gate: \(error)")
            return 1
        }
        switch arguments.first {
        case nil:
            console.err(usage)
            return 1
        case "help", "--help", "-h":
            console.out(usage)
            return 0
        case "--version":
            return VersionCommand.run([], console: console, clock: clock)
        default:
            break
        }
        guard let (command, words) = find(arguments, in: commands) else {
            console.err("phosra-gate: unknown command \"\(arguments[0])\"\n\(usage)")
            return 1
        }
        if words.contains("--help") || words.contains("-h") {
            console.out(command.usage)
            return 0
        }
        return command.run(words, console: console, clock: clock)
    }

    /// The one clock of this process, made here and passed to the command and from there
    /// to everything that reads the time. `testClock` (`PHOSRA_GATE_TEST_CLOCK`, test-only)
    /// is an ISO 8601 instant such as `2026-12-01T12:00:00Z` (no offset: UTC): the wall
    /// clock starts there and advances with the monotonic clock, so that a test of the
    /// real binary does not depend on the time of day it runs at (a policy's downtime).
    static func makeClock(testClock: String?) throws(GatewayError) -> any Clock {
        guard let testClock, !testClock.isEmpty else { return SystemClock() }
        let start: Int64
        do { start = try TimeArgument.parse(testClock, zone: .utc) } catch {
            throw .usage("\(Gateway.testClockVariable): \(error.description)")
        }
        return SystemClock(wallStartingAt: WallTime(unixSeconds: start))
    }
}
