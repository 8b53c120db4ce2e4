import EventLoop
import Glibc
import SystemIO
import Zoneinfo

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
          blocklists  list | compile | update: the category lists, their compiled file, downloads
          firewall    print | apply | remove: the nftables table that keeps the LAN on the gateway
          services    the apps the gateway knows as network services; check NAME: whose is it
          bench       matcher: the matcher's speed and memory (docs/benchmarks.md#targets)
          passwd      read a password on standard input, print its hash for proxy_password
          doctor      check a running gateway, one line per check with the fix (docs/doctor.md)
          version   print the version
        """

    /// Runs `arguments` (without the program name) and returns the exit status.
    public static func main(_ arguments: [String]) -> Int32 {
        let console = StandardConsole()
        let clock: any Clock
        do { clock = try makeClock(testClock: getenv(testClockVariable).map { String(cString: $0) }) } catch {
            console.err("phosra-gate: \(error)")
            return 1
        }
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
            return CheckCommand.run(rest, console: console, clock: clock)
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
            return RunCommand.run(rest, console: console, clock: clock)
        case "blocklists":
            return BlocklistsCommand.run(rest, console: console, clock: clock)
        case "firewall":
            return FirewallCommand.run(rest, console: console)
        case "services":
            if rest.contains("--help") {
                console.out(ServicesCommand.usage)
                return 0
            }
            return ServicesCommand.run(rest, console: console)
        case "register", "sync", "status", "hits":
            if rest.contains("--help") {
                console.out(
                    [
                        "register": RegisterCommand.usage, "sync": SyncCommand.usage, "status": StatusCommand.usage,
                        "hits": HitsCommand.usage,
                    ][command]!)
                return 0
            }
            switch command {
            case "register": return RegisterCommand.run(rest, console: console, clock: clock)
            case "sync": return SyncCommand.run(rest, console: console, clock: clock)
            case "status": return StatusCommand.run(rest, console: console, clock: clock)
            default: return HitsCommand.run(rest, console: console, clock: clock)
            }
        case "bench":
            switch rest.first {
            case "matcher":
                if rest.contains("--help") {
                    console.out(BenchMatcherCommand.usage)
                    return 0
                }
                return BenchMatcherCommand.run(Array(rest.dropFirst()), console: console, clock: clock)
            case "matcher-child":
                return MatcherChild.run(Array(rest.dropFirst()), console: console, clock: clock)
            default:
                console.err("usage: phosra-gate bench matcher [options]")
                return 1
            }
        case "doctor":
            if rest.contains("--help") {
                console.out(DoctorCommand.usage)
                return 0
            }
            return DoctorCommand.run(rest, console: console, clock: clock)
        case "passwd":
            if rest.contains("--help") {
                console.out(PasswdCommand.usage)
                return 0
            }
            return PasswdCommand.run(rest, console: console)
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

    /// For tests of the real binary only; never set on a real gateway. See `makeClock`.
    static let testClockVariable = "PHOSRA_GATE_TEST_CLOCK"
    /// Test-only: when set, SIGUSR2 wedges the first loop thread for good, so a test can
    /// see the systemd watchdog stop being pinged (docs/configuration.md#systemd).
    static let testWedgeVariable = "PHOSRA_GATE_TEST_WEDGE"

    /// The one clock of this process, made here and passed to the command and from there
    /// to everything that reads the time. `testClock` (`PHOSRA_GATE_TEST_CLOCK`, test-only)
    /// is an ISO 8601 instant such as `2026-12-01T12:00:00Z` (no offset: UTC): the wall
    /// clock starts there and advances with the monotonic clock, so that a test of the
    /// real binary does not depend on the time of day it runs at (a policy's downtime).
    static func makeClock(testClock: String?) throws(GatewayError) -> any Clock {
        guard let testClock, !testClock.isEmpty else { return SystemClock() }
        let start: Int64
        do { start = try TimeArgument.parse(testClock, zone: .utc) } catch {
            throw .usage("\(testClockVariable): \(error.description)")
        }
        return SystemClock(wallStartingAt: WallTime(unixSeconds: start))
    }
}
