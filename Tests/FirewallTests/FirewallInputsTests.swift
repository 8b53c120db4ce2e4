import DomainMatch
import Foundation
import Policy
import TestSupport
import Testing

@testable import Firewall

/// What the table is made from: the listener ports a redirect can reach, and the
/// DNS-over-HTTPS address list (docs/network.md#the-doh-address-list).
@Suite(.blocking) struct FirewallInputsTests {
    static func listen(_ texts: [String]) -> [ListenAddress] { texts.map { ListenAddress($0)! } }

    @Test func redirectsGoToAListenerOffLoopback() throws {
        let both = try #require(RedirectPorts.serving(Self.listen(["127.0.0.1:5300", "0.0.0.0:53", "[::]:5353"])))
        #expect(both.ports == RedirectPorts(v4: 53, v6: 5353))
        #expect(both.unserved.isEmpty)
        // The wildcard wins over a single address of the same family.
        let wildcard = try #require(RedirectPorts.serving(Self.listen(["198.51.100.1:5301", "0.0.0.0:5302"])))
        #expect(wildcard.ports.v4 == 5302)
        // Only IPv4: IPv6 is redirected to the same port, where nothing listens (closed).
        let v4Only = try #require(RedirectPorts.serving(Self.listen(["198.51.100.1:53", "[::1]:53"])))
        #expect(v4Only.ports == RedirectPorts(53))
        #expect(v4Only.unserved == ["IPv6"])
        let v6Only = try #require(RedirectPorts.serving(Self.listen(["[2001:db8::1]:5353"])))
        #expect(v6Only.ports == RedirectPorts(5353))
        #expect(v6Only.unserved == ["IPv4"])
        // Loopback only (a checkout's default): nothing a redirect reaches.
        #expect(RedirectPorts.serving(Self.listen(["127.0.0.1:5300", "[::1]:5300"])) == nil)
        #expect(RedirectPorts.serving([]) == nil)
    }

    @Test func theDoHListReadsAddressesAndCIDRsWithComments() throws {
        let text = """
            # Example resolver
            203.0.113.53
            2001:db8::53   # its IPv6 address

            \t198.51.100.0/24\r
            """
        let entries = try DoHAddressList.parse(text, path: "list.txt")
        #expect(entries.map(\.description) == ["203.0.113.53/32", "2001:db8::53/128", "198.51.100.0/24"])
    }

    @Test func aBadLineNamesFileAndLine() {
        #expect(throws: DoHAddressList.ParseError(path: "x/doh.txt", line: 3, text: "dns.google")) {
            try DoHAddressList.parse("8.8.8.8\n\ndns.google # a name\n", path: "x/doh.txt")
        }
        let error = DoHAddressList.ParseError(path: "x/doh.txt", line: 3, text: "dns.google")
        #expect(error.description == "x/doh.txt:3: \"dns.google\" is not an IPv4 or IPv6 address or CIDR")
        #expect(throws: DoHAddressList.ParseError.self) { try DoHAddressList.parse("10.0.0.0/33", path: "f") }
    }

    /// The project's built-in list parses, every entry is under a comment naming its
    /// operator, and the best-known resolvers are in it.
    @Test func theBuiltInListIsComplete() throws {
        let path = GateRun.checkout.appendingPathComponent("blocklists/doh-addresses.txt").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let entries = try DoHAddressList.parse(text, path: path)
        #expect(entries.count > 100)
        for expected in [
            "8.8.8.8", "2001:4860:4860::8888", "1.1.1.1", "1.1.1.3", "2606:4700:4700::1113", "9.9.9.9",
            "2620:fe::fe", "94.140.14.15", "208.67.222.123", "185.228.168.168", "194.242.2.6", "76.76.2.5",
            "45.90.28.7",
        ] {
            let address = IPAddress(expected)!
            #expect(entries.contains { $0.contains(address) }, "\(expected) missing")
        }
        var commented = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") {
                commented = true
            } else if line.isEmpty {
                commented = false
            } else {
                #expect(commented, "\(line) follows no comment")
            }
        }
        // No entry is in the documentation or private ranges: those are never resolvers.
        let reserved = [
            "10.0.0.0/8", "192.168.0.0/16", "172.16.0.0/12", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32",
            "fc00::/7",
        ]
        .map { AddressRange($0)! }
        for entry in entries {
            #expect(!reserved.contains { $0.contains(entry.address) }, "\(entry)")
        }
    }
}
