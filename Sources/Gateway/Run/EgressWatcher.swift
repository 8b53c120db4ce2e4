import DNSProxy
import DomainMatch
import Firewall
import Glibc
import Locks
import Neighbours
import Policy
import SystemIO

/// Turns the firewall's refusals of `egress = web` devices into hits
/// (docs/network.md#egress): every `interval` it reads the table's sets of refused
/// attempts with `nft -j list set` and records each new one as a `circumvention:egress`
/// hit of the device's profile, source `firewall`. The kernel refuses the packet on its
/// own; this thread only tells the parent. It runs only when `lan_interfaces` is set, on
/// its own thread, since a child process must not hold up a loop.
///
/// Reading the sets needs CAP_NET_ADMIN (the unit gives it). Without the table (the
/// firewall not applied, or no profile is `egress = web`), or without the right to read
/// it, the watcher says so once and again only when that changes: no log line per read.
final class EgressWatcher: Sendable {
    static let interval: Nanoseconds = 5_000_000_000
    static let nftCandidates = ["/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft", "/bin/nft"]

    private let doorbell: Doorbell
    private let stopped = Lock(false)
    private let thread = Lock<SystemThread?>(nil)

    init() throws(SystemError) { doorbell = try Doorbell() }

    /// Starts the thread. `profiles` gives the profile table in force now; `hits` takes
    /// the hits.
    func start(
        profiles: @escaping @Sendable () -> ProfileTable, hits: any HitRecorder, log: Logger, clock: any Clock
    ) throws(SystemError) {
        let spawned = try SystemThread.spawn(name: "pg-egress", priority: .background) { [self] in
            guard let nft = Self.nftCandidates.first(where: { access($0, X_OK) == 0 }) else {
                log.warn("egress_watch", [("note", "nft not found: refused egress is not recorded as hits")])
                return
            }
            var reader = Reader(nft: nft, profiles: profiles, hits: hits, log: log, clock: clock)
            while !stopped.withLock({ $0 }) {
                reader.readOnce()
                _ = try? doorbell.wait(timeout: Self.interval, clock: clock)
                doorbell.drain()
            }
        }
        thread.withLock { $0 = spawned }
    }

    /// Stops the thread and waits for it (at most one `nft` run).
    func stop() {
        stopped.withLock { $0 = true }
        doorbell.ring()
        thread.withLock { thread in
            thread?.join()
            thread = nil
        }
    }

    /// One read of both sets and its hits; what the thread keeps between reads.
    struct Reader {
        enum State: Equatable {
            case unknown, reading, absent
            case failing(String)
        }

        let nft: String
        let profiles: @Sendable () -> ProfileTable
        let hits: any HitRecorder
        let log: Logger
        let clock: any Clock
        var tally = EgressTally()
        var state = State.unknown

        mutating func readOnce() {
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
            report(now)
            guard now == .reading else { return }
            let fresh = tally.fresh(read, now: Int64(clock.now() / 1_000_000_000))
            guard !fresh.isEmpty else { return }
            record(fresh)
        }

        private mutating func report(_ now: State) {
            guard now != state else { return }
            state = now
            switch now {
            case .reading:
                log.info("egress_watch", [("state", "reading"), ("sets", Ruleset.refusedSets.joined(separator: ","))])
            case .absent:
                log.info(
                    "egress_watch",
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
                    "egress_watch",
                    [("state", "failing"), ("error", why), ("note", "refused egress is not recorded as hits")])
            case .unknown: break
            }
        }

        private func record(_ attempts: [EgressAttempt]) {
            let table = profiles()
            var macs: [IPAddress: MACAddress] = [:]
            if table.usesMACs, let neighbours = try? NetlinkNeighbourTable().neighbours() {
                for neighbour in neighbours { macs[neighbour.address] = neighbour.mac }
            }
            let wall = clock.wall().unixSeconds
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

        private static func firstLine(_ text: String) -> String {
            String(text.split(separator: "\n").first ?? "nft failed")
        }
    }
}
