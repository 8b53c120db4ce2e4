import DomainMatch
import EventLoop
import Neighbours
import SystemIO
import TestSupport
import Testing

/// The real kernel: a gateway and a device in network namespaces of their own, a veth
/// pair between them, addresses from the documentation ranges (RFC 5737, RFC 3849) that
/// exist only inside those namespaces. The device talks to the gateway over IPv4 and from
/// two IPv6 addresses, as a phone with privacy addresses does; the gateway's cache must
/// put all three on the device's MAC address.
@Suite(.blocking) struct NeighbourNamespaceTests {
    static let deviceMAC = "02:00:5e:10:00:01"

    @Test func theKernelTableNamesTheDeviceBehindEachAddress() throws {
        let namespaces = try NetworkNamespaces.make()
        defer { namespaces.remove() }
        let gateway = namespaces.gateway
        let device = namespaces.device
        try namespaces.run(
            in: gateway, ["link", "add", "gw0", "type", "veth", "peer", "name", "dev0", "netns", device])
        try namespaces.run(in: device, ["link", "set", "dev0", "address", Self.deviceMAC])
        try namespaces.run(in: gateway, ["address", "add", "198.51.100.1/24", "dev", "gw0"])
        try namespaces.run(in: gateway, ["-6", "address", "add", "2001:db8::1/64", "dev", "gw0", "nodad"])
        try namespaces.run(in: device, ["address", "add", "198.51.100.2/24", "dev", "dev0"])
        for address in ["2001:db8::a/64", "2001:db8::b/64"] {
            try namespaces.run(in: device, ["-6", "address", "add", address, "dev", "dev0", "nodad"])
        }
        try namespaces.run(in: gateway, ["link", "set", "gw0", "up"])
        try namespaces.run(in: device, ["link", "set", "dev0", "up"])

        // Sockets keep the namespace they were made in, so the round trips can run here.
        let echo = try namespaces.inside(gateway) {
            try Socket.udp(bindingTo: SocketAddress("[::]:7"), ipv6Only: false)
        }
        defer { echo.close() }
        let senders = try namespaces.inside(device) {
            try ["198.51.100.2", "[2001:db8::a]", "[2001:db8::b]"].map {
                try Socket.udp(bindingTo: SocketAddress("\($0):0"))
            }
        }
        defer { for sender in senders { sender.close() } }
        try roundTrip(from: senders[0], to: SocketAddress("198.51.100.1:7"), echo: echo)
        try roundTrip(from: senders[1], to: SocketAddress("[2001:db8::1]:7"), echo: echo)
        try roundTrip(from: senders[2], to: SocketAddress("[2001:db8::1]:7"), echo: echo)

        // The cache's netlink socket is opened on this thread, in the gateway's namespace.
        let answers = try namespaces.inside(gateway) { () -> [String: String] in
            let cache = NeighbourCache()
            let second: Nanoseconds = 1_000_000_000
            var answers: [String: String] = [:]
            for address in ["198.51.100.2", "2001:db8::a", "2001:db8::b", "::ffff:198.51.100.2"] {
                answers[address] = cache.mac(for: IPAddress(address)!, now: 0)?.description ?? "nil"
            }
            // Never in touch: each dumps again (past the 1 s dump interval) and is still unknown.
            answers["198.51.100.99"] =
                cache.mac(for: IPAddress("198.51.100.99")!, now: 2 * second)?.description ?? "nil"
            answers["2001:db8::99"] = cache.mac(for: IPAddress("2001:db8::99")!, now: 4 * second)?.description ?? "nil"
            answers["dumps"] = String(cache.statistics.dumps)
            answers["failures"] = String(cache.statistics.failures)
            answers["lastFailure"] = cache.lastFailure.map { "\($0)" } ?? "none"
            return answers
        }
        #expect(
            answers == [
                "198.51.100.2": Self.deviceMAC, "2001:db8::a": Self.deviceMAC, "2001:db8::b": Self.deviceMAC,
                "::ffff:198.51.100.2": Self.deviceMAC, "198.51.100.99": "nil", "2001:db8::99": "nil",
                "dumps": "3", "failures": "0", "lastFailure": "none",
            ])
    }

}
