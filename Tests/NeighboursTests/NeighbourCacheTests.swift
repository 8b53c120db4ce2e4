import DomainMatch
import EventLoop
import Neighbours
import SystemIO
import TestSupport
import Testing

/// A neighbour table the test edits, counting the dumps asked of it.
final class FakeNeighbourTable: NeighbourTableSource {
    var entries: [String: String] = [:]
    var failure: NeighbourError?
    private(set) var dumps = 0

    func neighbours() throws(NeighbourError) -> [Neighbour] {
        dumps += 1
        if let failure { throw failure }
        return entries.map { Neighbour(address: IPAddress($0.key)!, mac: MACAddress($0.value)!) }
    }
}

@Suite(.blocking) struct NeighbourCacheTests {
    let second: Nanoseconds = 1_000_000_000
    let phone = MACAddress("02:00:5e:10:00:01")!
    let laptop = MACAddress("aa:bb:cc:dd:ee:ff")!

    func address(_ text: String) -> IPAddress { IPAddress(text)! }

    /// Every UDP query asks the cache (docs/sync.md#hits: the MAC is what proves a source),
    /// so a known address and an unknown one between dumps allocate nothing.
    @Test(.countsAllocationsAsShipped)
    func aLookupBetweenDumpsAllocatesNothing() {
        let table = FakeNeighbourTable()
        table.entries = ["198.51.100.7": "02:00:5e:10:00:01"]
        let cache = NeighbourCache(source: table)
        let known = address("198.51.100.7")
        let unknown = address("2001:db8::99")
        #expect(cache.mac(for: known, now: second) == phone)
        #expect(cache.mac(for: unknown, now: second) == nil)
        #expect(Allocations.count { blackHole(cache.mac(for: known, now: second + 1)) } == 0)
        #expect(Allocations.count { blackHole(cache.mac(for: unknown, now: second + 2)) } == 0)
        #expect(table.dumps == 1)
    }

    @Test func aHitWithinTenSecondsIsAnsweredWithoutADump() {
        let table = FakeNeighbourTable()
        table.entries = ["198.51.100.7": "02:00:5e:10:00:01"]
        let cache = NeighbourCache(source: table)
        let start: Nanoseconds = 5_000 * second
        #expect(cache.mac(for: address("198.51.100.7"), now: start) == phone)
        #expect(table.dumps == 1)
        for step in 1...1000 {
            #expect(
                cache.mac(for: address("198.51.100.7"), now: start + 10 * second * Nanoseconds(step) / 1001) == phone)
        }
        #expect(table.dumps == 1)
        #expect(cache.statistics.hits == 1001)
        #expect(cache.statistics.dumps == 1)
    }

    @Test func anEntryIsReadAgainAfterTenSeconds() {
        let table = FakeNeighbourTable()
        table.entries = ["198.51.100.7": "02:00:5e:10:00:01"]
        let cache = NeighbourCache(source: table)
        #expect(cache.mac(for: address("198.51.100.7"), now: 0) == phone)
        // The address now belongs to another device: the change shows once the entry is 10 s old.
        table.entries = ["198.51.100.7": "aa:bb:cc:dd:ee:ff"]
        #expect(cache.mac(for: address("198.51.100.7"), now: 10 * second - 1) == phone)
        #expect(cache.mac(for: address("198.51.100.7"), now: 10 * second) == laptop)
        #expect(table.dumps == 2)
        // The kernel dropped it: unknown, not remembered.
        table.entries = [:]
        #expect(cache.mac(for: address("198.51.100.7"), now: 20 * second) == nil)
        #expect(table.dumps == 3)
    }

    @Test func oneDumpRefreshesEveryAddress() {
        let table = FakeNeighbourTable()
        table.entries = ["198.51.100.7": "02:00:5e:10:00:01"]
        let cache = NeighbourCache(source: table)
        #expect(cache.mac(for: address("198.51.100.7"), now: 0) == phone)
        // A new device appears: its first lookup reads the table again…
        table.entries["198.51.100.8"] = "aa:bb:cc:dd:ee:ff"
        table.entries["2001:db8::b"] = "aa:bb:cc:dd:ee:ff"
        #expect(cache.mac(for: address("198.51.100.8"), now: 3 * second) == laptop)
        #expect(table.dumps == 2)
        // …which also brought in its other address, and renewed the first one's age.
        #expect(cache.mac(for: address("2001:db8::b"), now: 3 * second) == laptop)
        #expect(cache.mac(for: address("198.51.100.7"), now: 12 * second) == phone)
        #expect(table.dumps == 2)
    }

    @Test func unknownAddressesDumpAtMostOncePerSecond() {
        let table = FakeNeighbourTable()
        table.entries = ["198.51.100.7": "02:00:5e:10:00:01"]
        let cache = NeighbourCache(source: table)
        // A flood from 1,000 unknown addresses within a second costs one dump.
        for host in 0..<1000 {
            let unknown = IPAddress.v6(high: 0x2001_0DB8_0000_0000, low: UInt64(host) + 0x100)
            #expect(cache.mac(for: unknown, now: 100 * second + Nanoseconds(host) * 999_000) == nil)
        }
        #expect(table.dumps == 1)
        #expect(cache.statistics.misses == 1000)
        // The known address is still a hit meanwhile, without a dump.
        #expect(cache.mac(for: address("198.51.100.7"), now: 100 * second + 500_000_000) == phone)
        // A second after the last dump, an unknown address is looked up again.
        table.entries["2001:db8::100"] = "aa:bb:cc:dd:ee:ff"
        #expect(cache.mac(for: address("2001:db8::100"), now: 101 * second - 1) == nil)
        #expect(table.dumps == 1)
        #expect(cache.mac(for: address("2001:db8::100"), now: 101 * second) == laptop)
        #expect(table.dumps == 2)
    }

    @Test func mappedAddressesAreLookedUpAsIPv4() {
        let table = FakeNeighbourTable()
        table.entries = [
            "198.51.100.7": "02:00:5e:10:00:01", "2001:db8::a": "02:00:5e:10:00:01",
            "2001:db8::b": "02:00:5e:10:00:01",
        ]
        let cache = NeighbourCache(source: table)
        #expect(cache.mac(for: address("::ffff:198.51.100.7"), now: 0) == phone)
        #expect(cache.mac(for: address("198.51.100.7"), now: 0) == phone)
        #expect(cache.mac(for: address("2001:db8::a"), now: 0) == phone)
        #expect(cache.mac(for: address("2001:db8::b"), now: 0) == phone)
        // Only the ::ffff:0:0/96 prefix is unmapped: ::198.51.100.7 (deprecated compatible) is not.
        #expect(cache.mac(for: address("::198.51.100.7"), now: 2 * second) == nil)
        #expect(table.dumps == 2)
    }

    @Test func aFailedDumpIsCountedAndAnswersNil() {
        let table = FakeNeighbourTable()
        table.failure = .system(SystemError("socket(AF_NETLINK)", errno: 97))
        let cache = NeighbourCache(source: table)
        #expect(cache.mac(for: address("198.51.100.7"), now: 0) == nil)
        #expect(cache.statistics.failures == 1)
        #expect(cache.lastFailure == .system(SystemError("socket(AF_NETLINK)", errno: 97)))
        // Not retried within the second.
        #expect(cache.mac(for: address("198.51.100.7"), now: second / 2) == nil)
        #expect(table.dumps == 1)
        // It heals.
        table.failure = nil
        table.entries = ["198.51.100.7": "02:00:5e:10:00:01"]
        #expect(cache.mac(for: address("198.51.100.7"), now: second) == phone)
        var expected = NeighbourCache.Statistics()
        expected.hits = 1
        expected.misses = 2
        expected.dumps = 1
        expected.failures = 1
        #expect(cache.statistics == expected)
    }

    @Test func aFailedRefreshKeepsYoungEntriesAndDropsOldOnes() {
        let table = FakeNeighbourTable()
        table.entries = ["198.51.100.7": "02:00:5e:10:00:01"]
        let cache = NeighbourCache(source: table)
        #expect(cache.mac(for: address("198.51.100.7"), now: 0) == phone)
        table.failure = .kernel(errno: 16)
        #expect(cache.mac(for: address("198.51.100.9"), now: 2 * second) == nil)
        #expect(cache.statistics.failures == 1)
        #expect(cache.mac(for: address("198.51.100.7"), now: 9 * second) == phone)
        // Ten seconds old and the kernel cannot be asked: unknown, never the old answer.
        #expect(cache.mac(for: address("198.51.100.7"), now: 10 * second) == nil)
        #expect(cache.statistics.failures == 2)
        #expect(cache.mac(for: address("198.51.100.7"), now: 10 * second + 1) == nil)
        #expect(table.dumps == 3)
    }

    @Test func customAgeAndInterval() {
        let table = FakeNeighbourTable()
        table.entries = ["198.51.100.7": "02:00:5e:10:00:01"]
        let cache = NeighbourCache(source: table, maximumAge: 2 * second, minimumDumpInterval: second / 10)
        #expect(cache.mac(for: address("198.51.100.7"), now: 0) == phone)
        #expect(cache.mac(for: address("198.51.100.7"), now: 2 * second) == phone)
        #expect(table.dumps == 2)
        #expect(cache.mac(for: address("198.51.100.8"), now: 2 * second + second / 10) == nil)
        #expect(table.dumps == 3)
    }
}
