import Firewall
import Glibc
import SystemIO

/// `phosra-gate firewall watch`: the privileged half of recording refused egress
/// (docs/network.md#egress). Every `interval` it reads the table's sets of refused attempts
/// with `nft -j list set` and replaces `egress_attempts` with what it found
/// (`EgressAttemptsFile`), which the daemon reads without any capability. It runs as the
/// firewall's unit's main process, as root, so the daemon that parses the LAN's traffic
/// never holds the right to change the firewall.
///
/// It keeps nothing between reads (the file is rewritten whole, and the sets are bounded),
/// logs a state only when it changes (the table missing, nft failing), never exits on
/// either, and stops on SIGTERM or SIGINT, removing the file: the unit removes the table
/// right after, and with it every attempt the file could name.
enum FirewallWatch {
    static let interval = 5
    static let stopSignals = [SIGTERM, SIGINT]

    static func run(file: String, log: Logger, clock: any Clock) throws(SystemError) {
        // Blocked before the first wait, so a stop request waits for `sigtimedwait`
        // instead of ending the process mid-write.
        try Signals.block(stopSignals)
        Signals.ignoreBrokenPipe()
        guard let nft = Nftables.path else {
            throw SystemError("access", errno: ENOENT, subject: Nftables.candidates.joined(separator: ", "))
        }
        log.info("firewall_watch", [("state", "started"), ("file", file), ("interval", "\(interval)s")])
        var reader = Reader(nft: nft, file: file, log: log)
        var stop: Int32?
        while stop == nil {
            reader.readOnce(wall: clock.wall().unixSeconds)
            stop = waitForStop(seconds: interval)
        }
        unlink(file)
        log.info("firewall_watch", [("state", "stopped"), ("signal", stop == SIGINT ? "INT" : "TERM")])
    }

    /// The stop signal taken within `seconds`, or nil when none came.
    private static func waitForStop(seconds: Int) -> Int32? {
        var set = Signals.set(of: stopSignals)
        var timeout = timespec(tv_sec: seconds, tv_nsec: 0)
        while true {
            let number = sigtimedwait(&set, nil, &timeout)
            if number > 0 { return number }
            // EINTR: a signal outside the set (none is expected); EAGAIN: the time is up.
            if errno != EINTR { return nil }
        }
    }

    /// One read of both sets and one write of the file; the state last logged.
    struct Reader {
        enum State: Equatable {
            case unknown, reading, absent
            case failing(String)
        }

        let nft: String
        let file: String
        let log: Logger
        var state = State.unknown

        mutating func readOnce(wall: Int64) {
            var read: [EgressAttempt] = []
            var now = State.reading
            for set in Ruleset.refusedSets {
                let result: ChildProcess.Result
                do {
                    result = try ChildProcess.run(
                        nft, ["-j", "list", "set", Ruleset.family, Ruleset.table, set], input: [])
                } catch {
                    now = .failing("\(error)")
                    break
                }
                guard result.status == 0 else {
                    // nft says "No such file or directory" for a missing table or set.
                    now = result.text.contains("No such file") ? .absent : .failing(Self.firstLine(result.text))
                    break
                }
                do { read += try EgressAttempts.parse(result.output) } catch {
                    now = .failing(error.description)
                    break
                }
            }
            // Without the table there is nothing refused: an empty file says so. A failed
            // read leaves the last file, which the daemon reports as stale once it ages.
            if now != .absent && now != .reading {
                report(now)
                return
            }
            let text = EgressAttemptsFile(
                read: wall, attempts: now == .reading ? read : [], tableAbsent: now == .absent && !tableExists()
            ).text
            do { try Files.writeAtomically(file, Array(text.utf8), mode: 0o644) } catch {
                now = .failing("\(error)")
            }
            report(now)
        }

        private mutating func report(_ now: State) {
            guard now != state else { return }
            state = now
            switch now {
            case .reading:
                log.info(
                    "firewall_watch", [("state", "reading"), ("sets", Ruleset.refusedSets.joined(separator: ","))])
            case .absent:
                log.info(
                    "firewall_watch",
                    [
                        ("state", "absent"),
                        (
                            "note",
                            "no egress sets in table \(Ruleset.family) \(Ruleset.table): firewall apply not run, "
                                + "or no profile is egress = web"
                        ),
                    ])
            case .failing(let why):
                log.warn(
                    "firewall_watch",
                    [("state", "failing"), ("error", why), ("note", "refused egress is not recorded as hits")])
            case .unknown: break
            }
        }

        /// Whether the table is there: sets are absent from it too when no profile is
        /// `egress = web`, and only a missing table is trouble. A failed listing says yes,
        /// since only a table seen missing is reported.
        private func tableExists() -> Bool {
            guard let result = try? ChildProcess.run(nft, ["list", "tables", Ruleset.family], input: []),
                result.status == 0
            else { return true }
            return result.text.split(separator: "\n").contains { $0 == "table \(Ruleset.family) \(Ruleset.table)" }
        }

        private static func firstLine(_ text: String) -> String {
            String(text.split(separator: "\n").first ?? "nft failed")
        }
    }
}
