import Bytes
import DomainMatch
import Policy
import TestFixtures
import Testing

@testable import ProxyCore

/// docs/proxy.md#local-destinations, driven by hand: what resolves to this host or its
/// link is refused with `local_destination` and never connected to; no hit is recorded.
@Suite struct LocalDestinationTests {
    let fixture = ProxyFixture()

    private func lookedUp(
        _ found: [String], request: String, _ fixture: ProxyFixture
    ) -> (
        actions: [ProxyAction], output: String
    ) {
        var connection = fixture.connection()
        _ = connection.receive(request, fixture.env())
        let actions = connection.lookupFinished(.addresses(found.map { IPAddress($0)! }), fixture.env())
        return (actions, connection.takeClientOutput())
    }

    @Test(arguments: [
        ["127.0.0.1"], ["::1"], ["0.0.0.0"], ["169.254.169.254"], ["fe80::1"], ["::ffff:127.0.0.1"],
        ["203.0.113.9", "127.0.0.1"],
    ])
    func anAnswerWithALocalAddressIsRefused(found: [String]) {
        for request in [
            "CONNECT example.org:443 HTTP/1.1\r\n\r\n", "GET http://example.org/ HTTP/1.1\r\nHost: example.org\r\n\r\n",
        ] {
            let (actions, output) = lookedUp(found, request: request, fixture)
            #expect(!actions.contains { if case .connect = $0 { return true } else { return false } }, "\(found)")
            #expect(actions.hits.isEmpty, "not a hit")
            #expect(output.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), "\(found): \(output)")
            #expect(output.contains("X-Phosra-Block: local_destination\r\n"), "\(found): \(output)")
        }
    }

    @Test func theGatewaysOwnAddressesAndTheOneItWasReachedOnAreRefused() {
        var own = fixture
        own.settings.ownAddresses = [IPAddress("198.51.100.1")!]
        let request = "CONNECT example.org:443 HTTP/1.1\r\n\r\n"
        #expect(lookedUp(["198.51.100.1"], request: request, own).output.contains("local_destination"))
        #expect(lookedUp(["::ffff:198.51.100.1"], request: request, own).output.contains("local_destination"))
        let arrivedOn = fixture.connection().arrivedOn.address.description
        #expect(lookedUp([arrivedOn], request: request, fixture).output.contains("local_destination"))
        #expect(lookedUp(["198.51.100.1"], request: request, fixture).actions.count == 1, "not ours: connected")
    }

    /// DNS rebinding (docs/dns.md#what-answers-may-carry): a public name answering with a
    /// private-use address would take the device to another host of the LAN.
    @Test(arguments: [
        ["192.168.1.20"], ["10.1.2.3"], ["172.16.0.9"], ["100.64.0.1"], ["fd00::20"], ["::ffff:10.0.0.1"],
        ["203.0.113.9", "192.168.1.20"],
    ])
    func aPublicNameAnsweringAPrivateAddressIsRefused(found: [String]) {
        for request in [
            "CONNECT example.org:443 HTTP/1.1\r\n\r\n", "GET http://example.org/ HTTP/1.1\r\nHost: example.org\r\n\r\n",
        ] {
            let (actions, output) = lookedUp(found, request: request, fixture)
            #expect(!actions.contains { if case .connect = $0 { return true } else { return false } }, "\(found)")
            #expect(actions.hits.isEmpty, "not a hit")
            #expect(output.contains("X-Phosra-Block: local_destination\r\n"), "\(found): \(output)")
        }
    }

    @Test func aNameUnderRebindAllowAndAnAddressLiteralMayReachTheLAN() {
        let lan = IPAddress("192.168.1.20")!
        let nas = lookedUp(["192.168.1.20"], request: "CONNECT nas.lan:443 HTTP/1.1\r\n\r\n", fixture)
        #expect(nas.actions == [.connect(Endpoint(lan, port: 443))], "lan is in rebind_allow's default")
        var corp = fixture
        corp.settings.rebindAllow = DomainSuffixes([try! QueryName.parse("corp.example")])
        let request = "CONNECT git.corp.example:443 HTTP/1.1\r\n\r\n"
        #expect(lookedUp(["192.168.1.20"], request: request, corp).actions == [.connect(Endpoint(lan, port: 443))])
        #expect(lookedUp(["192.168.1.20"], request: request, fixture).output.contains("local_destination"))
        #expect(
            lookedUp(["127.0.0.1"], request: request, corp).output.contains("local_destination"),
            "loopback stays refused under rebind_allow")
        var literals = fixture
        literals.settings.allowIPConnect = true
        var connection = literals.connection()
        #expect(
            connection.receive("CONNECT 192.168.1.20:443 HTTP/1.1\r\n\r\n", literals.env()) == [
                .connect(Endpoint(lan, port: 443))
            ], "an address asked for by the device is not an answer")
    }

    @Test func literalsAndLocalhostAreRefusedBeforeAnyLookup() {
        var literals = fixture
        literals.settings.allowIPConnect = true
        for request in [
            "CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n", "CONNECT [::1]:443 HTTP/1.1\r\n\r\n",
            "GET http://0.0.0.0/ HTTP/1.1\r\nHost: 0.0.0.0\r\n\r\n", "CONNECT localhost:443 HTTP/1.1\r\n\r\n",
            "GET http://app.localhost/ HTTP/1.1\r\nHost: app.localhost\r\n\r\n",
        ] {
            var connection = literals.connection()
            let actions = connection.receive(request, literals.env())
            #expect(
                !actions.contains {
                    switch $0 {
                    case .connect, .lookup: true
                    default: false
                    }
                }, "\(request)")
            #expect(connection.takeClientOutput().contains("X-Phosra-Block: local_destination"), "\(request)")
        }
    }

    @Test func allowLocalDestinationsLiftsTheRule() {
        var allowed = fixture
        allowed.settings.allowLocalDestinations = true
        let (actions, _) = lookedUp(["127.0.0.1"], request: "CONNECT example.org:443 HTTP/1.1\r\n\r\n", allowed)
        #expect(actions == [.connect(Endpoint(.v4(0x7F00_0001), port: 443))])
    }

    @Test func plainHTTPGoesOnlyToHTTPPorts() {
        var connection = fixture.connection()
        let actions = connection.receive(
            "GET http://example.org:8443/ HTTP/1.1\r\nHost: example.org:8443\r\n\r\n", fixture.env())
        #expect(actions.hits.first?.reasonText == "port")
        #expect(connection.takeClientOutput().contains("X-Phosra-Block: port"))
        var allowed = fixture.connection()
        let lookup = allowed.receive(
            "GET http://example.org:8080/ HTTP/1.1\r\nHost: example.org:8080\r\n\r\n", fixture.env())
        #expect(lookup.contains { if case .lookup = $0 { return true } else { return false } })
    }
}
