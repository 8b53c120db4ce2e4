import EventLoop
import Glibc
import Testing

@Suite struct SocketAddressTests {
    @Test(arguments: [
        "127.0.0.1:5300", "0.0.0.0:53", "[::1]:53", "[::]:0", "[2001:db8::1]:853", "10.1.2.3:65535", "[fe80::1%1]:53",
    ])
    func roundTrips(text: String) throws {
        let address = try SocketAddress(text)
        #expect(address.description == text)
        #expect(try SocketAddress(address.description) == address)
        var raw = sockaddr_storage()
        let length = address.write(to: &raw)
        #expect(SocketAddress(raw, length: length) == address)
    }

    @Test func fields() throws {
        let v4 = try SocketAddress("127.0.0.1:5300")
        #expect(v4.family == .ipv4 && v4.port == 5300 && v4.host == "127.0.0.1")
        #expect(v4.ipv4Bits == 0x7F00_0001 && v4.ipv6Bits == nil)
        #expect(SocketAddress(ipv4: 0x7F00_0001, port: 5300) == v4)
        let v6 = try SocketAddress("[::1]:53")
        #expect(v6.family == .ipv6 && v6.port == 53 && v6.host == "::1")
        #expect(v6.ipv6Bits?.high == 0 && v6.ipv6Bits?.low == 1 && v6.ipv4Bits == nil)
        #expect(SocketAddress(ipv6: 0, 1, port: 53) == v6)
        #expect(v6.withPort(853).description == "[::1]:853")
        #expect(try SocketAddress(host: "::1", port: 53) == v6)
        #expect(Set([v4, v6, try SocketAddress("127.0.0.1:5300")]).count == 2)
        #expect(v4 != v4.withPort(1))
    }

    @Test func rejects() {
        #expect(throws: SocketAddress.ParseError.missingPort("1.2.3.4")) { try SocketAddress("1.2.3.4") }
        #expect(throws: SocketAddress.ParseError.missingPort("[::1]")) { try SocketAddress("[::1]") }
        #expect(throws: SocketAddress.ParseError.invalidPort("1.2.3.4:70000")) { try SocketAddress("1.2.3.4:70000") }
        #expect(throws: SocketAddress.ParseError.invalidHost("host:53")) { try SocketAddress("host:53") }
        #expect(throws: SocketAddress.ParseError.unbracketedIPv6("::1:53")) { try SocketAddress("::1:53") }
        #expect(throws: SocketAddress.ParseError.invalidPort("1.2.3.4:")) { try SocketAddress("1.2.3.4:") }
        #expect(throws: SocketAddress.ParseError.invalidPort("1.2.3.4:+53")) { try SocketAddress("1.2.3.4:+53") }
        #expect(throws: SocketAddress.ParseError.invalidPort("[::1]:x")) { try SocketAddress("[::1]:x") }
        #expect(throws: SocketAddress.ParseError.invalidHost("1.2.3.256:53")) { try SocketAddress("1.2.3.256:53") }
        #expect(throws: SocketAddress.ParseError.invalidHost("[1.2.3.4]:53")) { try SocketAddress("[1.2.3.4]:53") }
        #expect(throws: SocketAddress.ParseError.invalidHost("[::1:53")) { try SocketAddress("[::1:53") }
        #expect(throws: SocketAddress.ParseError.invalidHost("[::1]x:53")) { try SocketAddress("[::1]x:53") }
        #expect(throws: SocketAddress.ParseError.unknownScope("[fe80::1%nosuchif0]:53")) {
            try SocketAddress("[fe80::1%nosuchif0]:53")
        }
        #expect(throws: SocketAddress.ParseError.invalidHost(":53")) { try SocketAddress(":53") }
    }
}
