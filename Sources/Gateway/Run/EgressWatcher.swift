import DNSProxy
import DomainMatch
import Firewall
import Glibc
import Locks
import Neighbours
import Notify
import Policy
import SystemIO

/// Turns the firewall's refusals of `egress = web` devices into hits
/// (docs/network.md#egress): every `interval` it reads the file `firewall watch` keeps
/// (`egress_attempts`, an `EgressAttemptsFile`) and records each new attempt as a
/// `circumvention:egress` hit of the device's profile, source `firewall`. The kernel
/// refuses the packet on its own; this thread only tells the parent. It runs only when
/// `lan_interfaces` is set, on its own thread, since file reads must not hold up a loop.
///
/// Reading the table itself needs CAP_NET_ADMIN, which this daemon must not hold: it
/// parses hostile input from the LAN all day, and with that right a compromise could
/// rewrite the firewall. `firewall watch`, in the firewall's own unit, reads it instead.
/// A missing, stale or malformed file is logged once, and again only when that changes:
/// no log line per read. A malformed file records nothing; an element stays in the
/// table's set for a minute, so the next good file still names it.
final class EgressWatcher: Sendable {
    static let interval: Nanoseconds = 5_000_000_000

    private let worker: Worker
    /// What the last read found wrong with the firewall, for the parent's `trouble`.
    private let seen = Lock<FailingCheck?>(nil)

    init() throws(SystemError) { worker = try Worker() }

    /// Starts the thread. `file` is `egress_attempts`; `profiles` gives the profile table
    /// in force now; `hits` takes the hits.
    func start(
        file: String, profiles: @escaping @Sendable () -> ProfileTable, hits: any HitRecorder, log: Logger,
        clock: any Clock
    ) throws(SystemError) {
        try worker.start(name: "pg-egress", priority: .background) { [self] in
            var reader = Reader(file: file, profiles: profiles, hits: hits, log: log, clock: clock)
            while !worker.isStopping {
                reader.readOnce()
                let trouble = reader.trouble
                seen.withLock { $0 = trouble }
                worker.wait(timeout: Self.interval, clock: clock)
            }
        }
    }

    /// The firewall as the last read found it, when that is trouble (`Reader.trouble`).
    func trouble() -> FailingCheck? { seen.withLock { $0 } }

    /// Stops the thread and waits for it (at most one file read).
    func stop() { worker.stop() }

    /// One read of the file and its hits; what the thread keeps between reads.
    struct Reader {
        enum State: Equatable {
            case unknown, reading, absent
            /// The file's `read`: `firewall watch` has not written for `staleAfter`.
            case stale(Int64)
            case malformed(String)
            case failing(String)
        }

        /// Six intervals of `firewall watch` without a new file.
        static let staleAfter: Int64 = 30

        let file: String
        let profiles: @Sendable () -> ProfileTable
        let hits: any HitRecorder
        let log: Logger
        let clock: any Clock
        var tally = EgressTally()
        var state = State.unknown
        var tableAbsent = false

        /// The firewall as this read found it, when that is trouble: what `doctor`'s
        /// firewall check would fail on, as far as the daemon can see without CAP_NET_ADMIN
        /// (whether the table matches the configuration is not visible here).
        var trouble: FailingCheck? {
            let apply = "phosra-gate firewall apply (or systemctl restart phosra-gate-firewall)"
            switch state {
            case .unknown: return nil
            case .reading:
                guard tableAbsent else { return nil }
                return FailingCheck(
                    check: "firewall",
                    what: "table inet phosra_gate is missing: devices can use other DNS servers and go around",
                    fix: apply)
            case .absent:
                return FailingCheck(
                    check: "firewall",
                    what: "the firewall's unit is not running (no egress_attempts file): nothing keeps devices "
                        + "from other DNS servers",
                    fix: "systemctl start phosra-gate-firewall (docs/network.md)")
            case .stale:
                return FailingCheck(
                    check: "firewall", what: "firewall watch has stopped reading the table (its file is stale)",
                    fix: apply)
            case .malformed(let why), .failing(let why):
                return FailingCheck(
                    check: "firewall", what: "the firewall watch's file cannot be read: \(why)", fix: apply)
            }
        }

        mutating func readOnce() {
            let bytes: [UInt8]
            do { bytes = try Files.read(file, limit: EgressAttemptsFile.sizeLimit) } catch {
                report(error.errno == ENOENT ? .absent : .failing(error.description))
                return
            }
            let read: EgressAttemptsFile
            do { read = try EgressAttemptsFile.parse(bytes) } catch {
                report(.malformed(error.description))
                return
            }
            let wall = clock.wall().unixSeconds
            tableAbsent = read.tableAbsent
            report(wall - read.read > Self.staleAfter ? .stale(read.read) : .reading)
            let fresh = tally.fresh(read.current(at: wall), now: Int64(clock.now() / 1_000_000_000))
            guard !fresh.isEmpty else { return }
            record(fresh, wall: wall)
        }

        private mutating func report(_ now: State) {
            // A stale file that grows older is still the same state.
            if case .stale = now, case .stale = state { return }
            guard now != state else { return }
            state = now
            switch now {
            case .reading:
                log.info("egress_watch", [("state", "reading"), ("file", file)])
            case .absent:
                log.info(
                    "egress_watch",
                    [
                        ("state", "absent"), ("file", file),
                        (
                            "note",
                            "firewall watch is not running (phosra-gate-firewall.service): "
                                + "refused egress is not recorded as hits"
                        ),
                    ])
            case .stale(let read):
                log.warn(
                    "egress_watch",
                    [
                        ("state", "stale"), ("file", file), ("read", "\(read)"),
                        ("note", "firewall watch has stopped writing: refused egress is not recorded as hits"),
                    ])
            case .malformed(let why):
                log.error(
                    "egress_watch",
                    [
                        ("state", "malformed"), ("file", file), ("error", why),
                        ("note", "not written by firewall watch: nothing in it is recorded"),
                    ])
            case .failing(let why):
                log.warn(
                    "egress_watch",
                    [("state", "failing"), ("error", why), ("note", "refused egress is not recorded as hits")])
            case .unknown: break
            }
        }

        private func record(_ attempts: [EgressAttempt], wall: Int64) {
            let table = profiles()
            var macs: [IPAddress: MACAddress] = [:]
            if table.usesMACs, let neighbours = try? NetlinkNeighbourTable().neighbours() {
                for neighbour in neighbours { macs[neighbour.address] = neighbour.mac }
            }
            let decision = Decision(.block, .circumvention, rule: "egress")
            for attempt in attempts {
                let profile = table.choose(Client(address: attempt.client, mac: macs[attempt.client]))
                let age = Int64(max(0, Ruleset.refusedTimeoutSeconds - attempt.expires))
                hits.record(
                    Hit(
                        profile: profile.name, name: attempt.name, decision: decision, client: attempt.client,
                        source: .firewall, time: wall - age))
                log.info(
                    "egress_refused",
                    [("client", "\(attempt.client)"), ("profile", profile.name), ("port", attempt.name)])
            }
        }
    }
}
