import Config
import Gateway
import SystemIO

/// `phosra-gate run`: the daemon (docs/dns.md).
package enum RunCommand: Command {
    static let name = "run"
    static let summary = "the gateway: the DNS proxy, the HTTP proxy and the sync"
    static let usage = """
        usage: phosra-gate run [--config FILE] [--policy FILE] [--lists DIR] [--state-dir DIR] [--dns-listen ADDR:PORT,…]
                               [--proxy-listen ADDR:PORT,…] [--upstream UPSTREAM,…] [--timezone TZ] [--block-mode MODE]
                               [--block-ttl DURATION] [--rate-limit N] [--allow-clients CIDR,…] [--ca-file FILE]
                               [--connect-ports PORT,…] [--allow-ip-connect] [--connect-timeout DURATION]
                               [--tunnel-idle DURATION] [--proxy-max-conns-per-client N] [--gateway-name NAME]
                               [any other key as --key value]
        """

    static func run(_ words: [String], console: some Console, clock systemClock: any Clock) -> Int32 {
        // Before any thread exists: signals then reach only the loop's signalfd.
        do { try Signals.block() } catch {
            console.err("phosra-gate run: \(error)")
            return 1
        }
        Signals.ignoreBrokenPipe()
        do {
            try serve(words, clock: systemClock)
            return 0
        } catch {
            console.err("phosra-gate run: \(error)")
            return 1
        }
    }

    /// The daemon from `run`'s words, until it stops; with `embedding`, inside a test's
    /// process (`GateHarness`), without touching the process's signals.
    package static func serve(
        _ words: [String], clock: any Clock, embedding: Serve.Embedding? = nil
    ) throws(GatewayError) {
        let arguments = try Arguments(command: words, flags: [:])
        guard arguments.operands.isEmpty else {
            throw GatewayError.usage("unexpected \"\(arguments.operands[0])\"")
        }
        try Serve.run(
            configPath: arguments.flag("--config"), flags: arguments.settings, clock: clock,
            selfCheck: { settings, options in DoctorCommand.daemonChecks(settings, options, clock: clock) },
            embedding: embedding)
    }
}
