import DomainMatch
import ParentPage
import Policy
import Testing

/// `web_allow_clients` (docs/parent-page.md#security): an address, a CIDR, a MAC address or a
/// profile lets a device in; nothing else does, and an empty list lets everyone in.
@Suite struct PageClientsTests {
    static func clients(_ words: String...) throws -> PageClients {
        PageClients(try words.map { try #require(PageClients.Entry($0), "\($0)") })
    }

    static func client(_ address: String, mac: String? = nil) -> Client {
        Client(address: IPAddress(address), mac: mac.flatMap(MACAddress.init))
    }

    @Test func eachWordIsAnAddressACIDRAMACOrAProfile() {
        #expect(PageClients.Entry("192.168.1.20") == .client(.range(AddressRange("192.168.1.20")!)))
        #expect(PageClients.Entry("2001:db8::/64") == .client(.range(AddressRange("2001:db8::/64")!)))
        #expect(PageClients.Entry("AA:BB:CC:DD:EE:01") == .client(.mac(MACAddress("aa:bb:cc:dd:ee:01")!)))
        #expect(PageClients.Entry("parents") == .profile("parents"))
        for bad in ["", "192.168.1.300", "10.0.0.0/33", "mia's", "a b", "<script>"] {
            #expect(PageClients.Entry(bad) == nil, "\(bad)")
        }
    }

    @Test func anAddressOrCIDRLetsIn() throws {
        let list = try Self.clients("192.168.1.20", "2001:db8:1::/64")
        let never: (Client) -> String = { _ in
            Issue.record("no profile entry to ask for")
            return ""
        }
        #expect(list.allows(Self.client("192.168.1.20"), profile: never))
        #expect(list.allows(Self.client("2001:db8:1::99"), profile: never))
        #expect(!list.allows(Self.client("192.168.1.21"), profile: never))
        #expect(!list.allows(Self.client("2001:db8:2::1"), profile: never))
        #expect(!list.needsMAC)
    }

    @Test func aMACLetsInEachOfTheDevicesAddresses() throws {
        let list = try Self.clients("aa:bb:cc:dd:ee:01")
        #expect(list.needsMAC)
        for address in ["192.168.1.50", "2001:db8::1234", "fe80::1"] {
            #expect(list.allows(Self.client(address, mac: "aa:bb:cc:dd:ee:01"), profile: { _ in "kid" }))
        }
        #expect(!list.allows(Self.client("192.168.1.50", mac: "aa:bb:cc:dd:ee:02"), profile: { _ in "kid" }))
        #expect(!list.allows(Self.client("192.168.1.50"), profile: { _ in "kid" }), "an unknown MAC is not a match")
    }

    @Test func aProfileLetsInTheDevicesTheGatewayGivesIt() throws {
        let list = try Self.clients("192.168.1.20", "parents")
        var asked: [Client] = []
        let choose: (Client) -> String? = { client in
            asked.append(client)
            return client.mac == MACAddress("aa:bb:cc:dd:ee:0a") ? "parents" : "kid"
        }
        #expect(list.allows(Self.client("192.168.1.20"), profile: choose))
        #expect(asked.isEmpty, "an address that matches needs no profile")
        #expect(list.allows(Self.client("192.168.1.77", mac: "aa:bb:cc:dd:ee:0a"), profile: choose))
        #expect(!list.allows(Self.client("192.168.1.78", mac: "aa:bb:cc:dd:ee:0b"), profile: choose))
        // Chosen by nothing but default_profile (nil): never in, whatever the default is.
        #expect(!list.allows(Self.client("192.168.1.79"), profile: { _ in nil }))
    }

    @Test func emptyIsEveryone() {
        #expect(PageClients.everyone.isEveryone)
        #expect(PageClients.everyone.allows(Client(), profile: { _ in "" }))
    }
}
