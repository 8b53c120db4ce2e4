import DomainMatch
import Testing

@testable import Policy

/// Choosing a profile: a proxy user, then the MAC, then the longest address or CIDR, then
/// `default_profile`.
@Suite struct ProfileTableTests {
    static let alice = PolicyRules.initialStrict
    static let bob = PolicyRules(CompiledPolicy())

    static func table(defaultProfile: String = "parents") -> ProfileTable {
        let roster = ProfileRoster(
            members: [
                .init(
                    name: "alice",
                    clients: [ClientEntry("192.168.1.0/24")!, ClientEntry("aa:bb:cc:dd:ee:01")!], proxyUser: "alice"),
                .init(name: "bob", clients: [ClientEntry("192.168.1.20")!, ClientEntry("2001:db8::/64")!]),
                .init(name: "parents", clients: [ClientEntry("aa:bb:cc:dd:ee:99")!], proxyUser: "mum"),
            ], defaultProfile: defaultProfile)
        return ProfileTable(
            roster: roster,
            profiles: [
                Profile(name: "alice", rules: alice), Profile(name: "bob", rules: bob),
                Profile(name: "parents", rules: .unfiltered),
            ])
    }

    @Test func theLongestAddressWins() {
        let table = Self.table()
        #expect(table.choose(Client(address: IPAddress("192.168.1.20")!)).name == "bob")
        #expect(table.choose(Client(address: IPAddress("192.168.1.21")!)).name == "alice")
        #expect(table.choose(Client(address: IPAddress("2001:db8::1234")!)).name == "bob")
        #expect(table.why(Client(address: IPAddress("192.168.1.21")!)) == "address 192.168.1.0/24")
    }

    @Test func theMACWinsOverTheAddressAndTheUserOverTheMAC() {
        let table = Self.table()
        let phone = Client(address: IPAddress("192.168.1.20")!, mac: MACAddress("aa:bb:cc:dd:ee:99"))
        #expect(table.choose(phone).name == "parents")
        #expect(table.why(phone) == "MAC aa:bb:cc:dd:ee:99")
        var asAlice = phone
        asAlice.proxyUser = "alice"
        #expect(table.choose(asAlice).name == "alice")
        #expect(table.why(asAlice) == "proxy user alice")
        // A user no profile has is no user: the MAC decides.
        asAlice.proxyUser = "mallory"
        #expect(table.choose(asAlice).name == "parents")
    }

    @Test func unknownDevicesGetTheDefault() {
        #expect(Self.table().choose(Client(address: IPAddress("10.0.0.9")!)).name == "parents")
        #expect(Self.table().choose(.anonymous).name == "parents")
        let none = Self.table(defaultProfile: "none").choose(Client(address: IPAddress("10.0.0.9")!))
        #expect(none.name == "none")
        #expect(!none.rules.filtered)
        #expect(Self.table(defaultProfile: "none").why(.anonymous) == "default_profile")
    }

    @Test func anIPv4MappedAddressIsItsIPv4Address() {
        #expect(Self.table().choose(Client(address: IPAddress("::ffff:192.168.1.20")!)).name == "bob")
    }

    @Test func oneProfileCoversEveryone() {
        let table = ProfileTable(single: Self.alice, name: "kid")
        #expect(table.choose(Client(address: IPAddress("10.1.2.3")!)).name == "kid")
        #expect(table.profiles.count == 1)
    }

    @Test func clientEntries() {
        #expect(ClientEntry("192.168.1.20")?.description == "192.168.1.20")
        #expect(ClientEntry("192.168.1.0/24")?.description == "192.168.1.0/24")
        #expect(ClientEntry("AA:BB:CC:DD:EE:FF")?.description == "aa:bb:cc:dd:ee:ff")
        #expect(ClientEntry("alice-phone") == nil)
    }
}
