import DomainMatch
import EventLoop
import SystemIO

/// Where `NeighbourCache` gets the whole table: the kernel (`NetlinkNeighbourTable`) or,
/// in tests, a fake.
public protocol NeighbourTableSource {
    /// Every usable entry, read now. Called on the cache's thread, at most once per
    /// `NeighbourCache.minimumDumpInterval`.
    mutating func neighbours() throws(NeighbourError) -> [Neighbour]
}

/// The MAC address of the device behind a client's IP address, so that a phone's rotating
/// IPv6 privacy addresses and its IPv4 address land in one profile
/// (docs/configuration.md#profiles).
///
/// Owned by one thread: each DNS loop makes its own on its thread and asks it for every
/// query it chooses a profile for; nothing is shared, so there is no lock. Not `Sendable`.
///
/// - A hit (an address in the table, which is younger than `maximumAge`) is one dictionary
///   lookup: no system call, no allocation.
/// - A miss, or any lookup once the table is older than `maximumAge`, dumps the whole table
///   again (one dump refreshes every address) — but at most once per `minimumDumpInterval`,
///   so a flood of queries from unknown addresses costs one dump a second, not one a query.
///   An address still unknown is `nil`: looked up again later, never guessed.
/// - A failed dump is counted (`statistics.failures`, `lastFailure`) and answers `nil`,
///   never more. Entries younger than `maximumAge` are still answered from the last good
///   table; older ones are not.
///
/// An IPv4-mapped IPv6 address (`::ffff:198.51.100.7`, how a dual-stack socket sees an IPv4
/// client) is looked up as the IPv4 address.
public final class NeighbourCache {
    /// Counters since the cache was made, for the loop's statistics.
    public struct Statistics: Equatable, Sendable {
        /// Lookups answered with a MAC address.
        public var hits = 0
        /// Lookups answered `nil`.
        public var misses = 0
        /// Dumps that succeeded.
        public var dumps = 0
        /// Dumps that failed.
        public var failures = 0

        public init() {}
    }

    public static let defaultMaximumAge: Nanoseconds = 10_000_000_000
    public static let defaultMinimumDumpInterval: Nanoseconds = 1_000_000_000

    public let maximumAge: Nanoseconds
    public let minimumDumpInterval: Nanoseconds
    public private(set) var statistics = Statistics()
    /// Why the last failed dump failed (kept after later successes, for the log).
    public private(set) var lastFailure: NeighbourError?

    private var source: any NeighbourTableSource
    private var table: [IPAddress: MACAddress] = [:]
    /// When the table was read; nil before the first good dump.
    private var readAt: Nanoseconds?
    /// When a dump was last tried, good or not; nil before the first.
    private var triedAt: Nanoseconds?

    /// - Parameters:
    ///   - source: the table; by default the kernel's, in the network namespace of the
    ///     thread that makes the first lookup.
    ///   - maximumAge: how long an entry is answered without reading the table again.
    ///   - minimumDumpInterval: the least time between two dumps.
    public init(
        source: any NeighbourTableSource = NetlinkNeighbourTable(),
        maximumAge: Nanoseconds = NeighbourCache.defaultMaximumAge,
        minimumDumpInterval: Nanoseconds = NeighbourCache.defaultMinimumDumpInterval
    ) {
        self.source = source
        self.maximumAge = maximumAge
        self.minimumDumpInterval = minimumDumpInterval
    }

    /// The MAC address behind `address`, or nil when the kernel does not know it (or cannot
    /// be asked just now). Called on the owning thread only.
    /// - Parameter now: the monotonic time (`Clock.now()`), read once per batch by the caller.
    public func mac(for address: IPAddress, now: Nanoseconds) -> MACAddress? {
        let key = Self.key(address)
        if isFresh(now), let mac = table[key] {
            statistics.hits += 1
            return mac
        }
        if mayDump(now) {
            refresh(now)
            if isFresh(now), let mac = table[key] {
                statistics.hits += 1
                return mac
            }
        }
        statistics.misses += 1
        return nil
    }

    private func isFresh(_ now: Nanoseconds) -> Bool {
        guard let readAt else { return false }
        // A `now` before the read (a caller's earlier reading of the clock) is fresh.
        return now < readAt || now - readAt < maximumAge
    }

    private func mayDump(_ now: Nanoseconds) -> Bool {
        guard let triedAt else { return true }
        return now < triedAt || now - triedAt >= minimumDumpInterval
    }

    /// The miss path: allocation and system calls are allowed here.
    private func refresh(_ now: Nanoseconds) {
        triedAt = now
        let neighbours: [Neighbour]
        do {
            neighbours = try source.neighbours()
        } catch {
            statistics.failures += 1
            lastFailure = error
            return
        }
        statistics.dumps += 1
        // Replaced whole: an address the kernel has dropped is dropped here too.
        table.removeAll(keepingCapacity: true)
        for neighbour in neighbours { table[Self.key(neighbour.address)] = neighbour.mac }
        readAt = now
    }

    /// `::ffff:a.b.c.d` as `a.b.c.d` (RFC 4291 §2.5.5.2); any other address as it is.
    private static func key(_ address: IPAddress) -> IPAddress {
        if case .v6(let high, let low) = address, high == 0, low >> 32 == 0xFFFF {
            return .v4(UInt32(truncatingIfNeeded: low))
        }
        return address
    }
}
