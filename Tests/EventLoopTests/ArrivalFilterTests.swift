import Glibc
import SystemIO
import TestSupport
import Testing

@testable import EventLoop

/// Which interface indexes are the LAN's (docs/network.md#who-is-served), read from the
/// real kernel: in a network namespace of the test's own, where a LAN interface is made,
/// removed and made again (a new index each time) while the clock is passed by hand, and
/// one a `*` name covers.
@Suite(.blocking) struct ArrivalFilterTests {
    static let second: Nanoseconds = 1_000_000_000

    @Test func loopbackIsServedAndWhatTheKernelDoesNotNameIsRefusedAndCounted() {
        let lan = LANInterfaces(["pg-no-such0"])
        #expect(lan.names == ["pg-no-such0", "lo"])
        let filter = ArrivalFilter(lan)
        #expect(filter.admits(if_nametoindex("lo"), on: .dnsUDP, now: 0))
        #expect(!filter.admits(nil, on: .dnsTCP, now: 0), "no index: refused")
        #expect(!filter.admits(UInt32.max, on: .proxy, now: 0))
        #expect(lan.refused(.dnsUDP) == 0)
        #expect(lan.refused(.dnsTCP) == 1)
        #expect(lan.refused(.proxy) == 1)
        #expect(lan.refused(.transparent) == 0)
        #expect(LANInterfaces(["lo", "br0"]).names == ["lo", "br0"], "lo once")
        #expect(ArrivalFilter.matches("wlan0", ["br-lan", "wlan*"]))
        #expect(ArrivalFilter.matches("br-lan", ["br-lan", "wlan*"]))
        #expect(!ArrivalFilter.matches("br-lan0", ["br-lan", "wlan*"]), "a name without * is whole")
        #expect(!ArrivalFilter.matches("wla", ["wlan*"]))
    }

    @Test func aLANInterfaceMadeOrMadeAgainIsServedWithinASecond() throws {
        let namespaces = try NetworkNamespaces.make(devices: 0)
        defer { namespaces.remove() }
        let gateway = namespaces.gateway
        try namespaces.run(in: gateway, ["link", "set", "lo", "up"])
        try namespaces.run(in: gateway, ["link", "add", "wan0", "type", "bridge"])
        let outcome = try namespaces.inside(gateway) { () throws -> [String] in
            var wrong: [String] = []
            func check(_ condition: Bool, _ what: String) { if !condition { wrong.append(what) } }
            let lan = LANInterfaces(["lan0", "wl*"])
            let filter = ArrivalFilter(lan)
            let wan = if_nametoindex("wan0")
            check(wan != 0, "wan0 exists")
            check(filter.admits(if_nametoindex("lo"), on: .dnsUDP, now: 0), "lo at 0 s")
            check(!filter.admits(wan, on: .dnsUDP, now: 0), "wan0 at 0 s")

            try namespaces.run(in: gateway, ["link", "add", "lan0", "type", "bridge"])
            let first = if_nametoindex("lan0")
            // Unknown, and the names were read less than a second ago: not read again.
            check(!filter.admits(first, on: .dnsUDP, now: Self.second / 2), "lan0 just made, at 0.5 s")
            check(filter.admits(first, on: .dnsUDP, now: Self.second), "lan0 at 1 s")

            // Made again: a new index. The old one stays listed until the names are read
            // again, which an unknown index does at most once a second.
            try namespaces.run(in: gateway, ["link", "del", "lan0"])
            try namespaces.run(in: gateway, ["link", "add", "lan0", "type", "bridge"])
            let again = if_nametoindex("lan0")
            let second = Self.second
            check(again != first, "a new index")
            check(filter.admits(first, on: .dnsUDP, now: second * 3 / 2), "the old index, not read again yet")
            check(!filter.admits(again, on: .dnsUDP, now: second * 3 / 2 + 1), "lan0 made again, at 1.5 s")
            check(filter.admits(again, on: .dnsUDP, now: 2 * second), "lan0 made again, at 2 s")
            check(!filter.admits(first, on: .dnsUDP, now: 2 * second + 1), "the old index is gone")
            check(!filter.admits(wan, on: .dnsUDP, now: 3 * second), "wan0 at 3 s")

            // A known index is taken without a read until the names are 10 s old.
            check(filter.admits(again, on: .dnsUDP, now: second * 25 / 2), "lan0 at 12.5 s")
            try namespaces.run(in: gateway, ["link", "del", "lan0"])
            check(filter.admits(again, on: .dnsUDP, now: 12_900_000_000), "lan0 gone, not read again yet")
            check(!filter.admits(again, on: .dnsUDP, now: 13 * second), "lan0 gone, read again by age")

            // A name ending in `*` covers every interface that starts with the rest.
            try namespaces.run(in: gateway, ["link", "add", "wl5", "type", "bridge"])
            check(filter.admits(if_nametoindex("wl5"), on: .dnsUDP, now: 14 * second), "wl5 for wl*")
            check(lan.refused(.dnsUDP) == 6, "refusals counted: \(lan.refused(.dnsUDP))")
            return wrong
        }
        #expect(outcome.isEmpty, "\(outcome)")
    }
}
