import CSystem
import Glibc
import SystemIO
import TestSupport
import Testing

@testable import EventLoop

/// The arrival interface (docs/network.md#who-is-served): control messages read as the
/// kernel lays them out, first built by hand (each malformed case), then from real
/// datagrams and connections on loopback.
@Suite struct ControlMessagesTests {
    /// One control message as `CMSG_SPACE` lays it out: length, level, type, data, padding.
    static func message(level: Int32, type: Int32, data: [UInt8], length: Int? = nil) -> [UInt8] {
        let header = ControlMessages.headerSize
        var bytes = [UInt8](repeating: 0, count: ControlMessages.aligned(header + data.count))
        bytes.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: length ?? header + data.count, toByteOffset: 0, as: Int.self)
            raw.storeBytes(of: level, toByteOffset: ControlMessages.levelOffset, as: Int32.self)
            raw.storeBytes(of: type, toByteOffset: ControlMessages.typeOffset, as: Int32.self)
        }
        bytes.replaceSubrange(header..<header + data.count, with: data)
        return bytes
    }

    static func zeros(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: count) }

    static func hostOrder(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }

    /// `in_pktinfo`: the index, then two addresses.
    static func pktinfo(_ index: UInt32) -> [UInt8] {
        message(level: CS_IPPROTO_IP, type: CS_IP_PKTINFO, data: hostOrder(index) + [127, 0, 0, 1, 127, 0, 0, 1])
    }

    /// `in6_pktinfo`: the address, then the index.
    static func pktinfo6(_ index: UInt32, type: Int32 = CS_IPV6_PKTINFO) -> [UInt8] {
        message(level: CS_IPPROTO_IPV6, type: type, data: [UInt8](repeating: 0, count: 15) + [1] + hostOrder(index))
    }

    static func parse(_ bytes: [UInt8]) -> UInt32? {
        bytes.withUnsafeBytes { ControlMessages.arrivalInterface(in: $0) }
    }

    @Test func thePacketInformationOfEitherFamilyGivesTheIndex() {
        #expect(Self.parse(Self.pktinfo(7)) == 7)
        #expect(Self.parse(Self.pktinfo6(9)) == 9)
        #expect(Self.parse(Self.pktinfo6(11, type: CS_IPV6_2292PKTINFO)) == 11)
        // Behind another message (SO_TIMESTAMP's 16 bytes), found at its aligned place.
        let timestamp = Self.message(level: SOL_SOCKET, type: 29, data: [UInt8](repeating: 0xAA, count: 16))
        #expect(Self.parse(timestamp + Self.pktinfo(3)) == 3)
        // An odd-sized message before it: the next one starts at the aligned offset.
        let odd = Self.message(level: SOL_SOCKET, type: 40, data: [1, 2, 3])
        #expect(Self.parse(odd + Self.pktinfo6(4)) == 4)
    }

    @Test func whatIsNotAWholePacketInformationMessageGivesNothing() {
        #expect(Self.parse([]) == nil, "no control messages")
        #expect(Self.parse(Self.message(level: SOL_SOCKET, type: 29, data: [0, 0, 0, 0])) == nil, "another kind")
        #expect(Self.parse(Self.pktinfo(0)) == nil, "index 0 names no interface")
        #expect(Self.parse(Array(Self.pktinfo(7).prefix(ControlMessages.headerSize - 1))) == nil, "a cut header")
        let short = Self.message(level: CS_IPPROTO_IP, type: CS_IP_PKTINFO, data: [7, 0, 0, 0])
        #expect(Self.parse(short) == nil, "data shorter than in_pktinfo")
        let short6 = Self.message(level: CS_IPPROTO_IPV6, type: CS_IPV6_PKTINFO, data: [UInt8](repeating: 1, count: 16))
        #expect(Self.parse(short6) == nil, "data shorter than in6_pktinfo")
        let tooLong = Self.message(
            level: CS_IPPROTO_IP, type: CS_IP_PKTINFO, data: Self.hostOrder(7) + Self.zeros(8), length: 200)
        #expect(Self.parse(tooLong) == nil, "a length past the end (MSG_CTRUNC)")
        let tooShort = Self.message(level: SOL_SOCKET, type: 29, data: Self.zeros(8), length: 2)
        #expect(Self.parse(tooShort + Self.pktinfo(7)) == nil, "a length shorter than a header stops the walk")
        // The IPv4 type under the IPv6 level (and the reverse) is another option.
        #expect(
            Self.parse(
                Self.message(level: CS_IPPROTO_IPV6, type: CS_IP_PKTINFO, data: Self.hostOrder(7) + Self.zeros(8)))
                == nil)
    }

    /// Datagrams on loopback say `lo` once the socket asks, and nothing before.
    @Test(arguments: [SocketAddress.Family.ipv4, .ipv6])
    func aDatagramSaysItArrivedOnLoopback(family: SocketAddress.Family) throws {
        let lo = if_nametoindex("lo")
        #expect(lo != 0)
        let asking = try Socket.udp(bindingTo: loopback(family))
        try asking.reportArrivalInterface()
        let silent = try Socket.udp(bindingTo: loopback(family))
        let client = try Socket.udp(bindingTo: loopback(family))
        let batch = DatagramBatch(slots: 4, slotSize: 512)
        for (server, expected) in [(asking, lo as UInt32?), (silent, nil)] {
            _ = try [UInt8]("query".utf8).withUnsafeBytes { try client.send($0, to: server.address!) }
            #expect(waitReady(server.descriptor, Int32(POLLIN)))
            #expect(try server.receive(into: batch) == 1)
            #expect(batch.arrivalInterface(at: 0) == expected, "\(family) \(expected == nil ? "silent" : "asking")")
            #expect(Array(batch.bytes(at: 0)) == Array("query".utf8))
        }
    }

    /// A connection accepted by a listener that asked says `lo`; one that did not, nothing.
    @Test(arguments: [SocketAddress.Family.ipv4, .ipv6])
    func anAcceptedConnectionSaysItArrivedOnLoopback(family: SocketAddress.Family) throws {
        let lo = if_nametoindex("lo")
        let asking = try Socket.listen(on: loopback(family))
        try asking.reportArrivalInterface()
        let silent = try Socket.listen(on: loopback(family))
        for (listener, expected) in [(asking, lo as UInt32?), (silent, nil)] {
            let client = try Socket.connect(to: listener.address!)
            defer { client.close() }
            #expect(waitReady(listener.descriptor, Int32(POLLIN)))
            let accepted = try #require(try listener.accept())
            defer { accepted.close() }
            #expect(accepted.arrivalInterface() == expected, "\(family)")
        }
    }

    /// The UDP server's added work per datagram (docs/performance.md#allocations-per-query):
    /// a batch received with its control messages, each datagram's interface read and
    /// checked, allocates nothing once the filter has read the interfaces.
    @Test(.countsAllocationsAsShipped)
    func checkingEachDatagramsInterfaceAllocatesNothing() throws {
        let server = try Socket.udp(bindingTo: loopback())
        try server.reportArrivalInterface()
        let client = try Socket.udp(bindingTo: loopback())
        let batch = DatagramBatch(slots: 8, slotSize: 512)
        let lan = LANInterfaces(["pg-no-such0"])
        let filter = ArrivalFilter(lan)
        var admitted = 0
        // Until all four are in (loopback delivers them at once, nearly always), and a
        // bounded number of tries in any case.
        func receiveAndCheck() throws {
            var received = 0
            var tries = 0
            while received < 4, tries < 100_000 {
                received += try server.receive(into: batch)
                var index = 0
                // Not `for … in`, which allocates in a debug build.
                while index < batch.count {
                    if filter.admits(batch.arrivalInterface(at: index), on: .dnsUDP, now: 1) { admitted += 1 }
                    index += 1
                }
                tries += 1
            }
        }
        var counts: [Int] = []
        for _ in 0..<3 {
            for _ in 0..<4 { _ = try [UInt8]("q".utf8).withUnsafeBytes { try client.send($0, to: server.address!) } }
            counts.append(try Allocations.count { try receiveAndCheck() })
        }
        #expect(admitted == 12, "every datagram came in on lo")
        #expect(counts.dropFirst() == [0, 0], "\(counts): the first round reads the interfaces")
        #expect(lan.refused(.dnsUDP) == 0)
    }
}
