import TestSupport
import Testing

@testable import Store

@Suite(.blocking) struct SightingsTests {
    func sighting(
        _ profile: String, _ client: String, address: String?, mac: String? = nil, at time: Int64, queries: Int
    ) -> ClientSighting {
        ClientSighting(
            profile: profile, client: client, address: address, mac: mac, firstSeen: time, lastSeen: time,
            queries: queries)
    }

    @Test func aDeviceSeenAgainKeepsItsFirstSightingAndAddsQueries() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        let mac = "02:00:00:00:00:0a"
        try store.recordSightings([
            sighting("kid", mac, address: "192.168.1.20", mac: mac, at: 1000, queries: 5),
            sighting("teen", "192.168.1.30", address: "192.168.1.30", at: 1000, queries: 2),
        ])
        // The same phone from its rotated IPv6 address, five minutes later.
        try store.recordSightings([sighting("kid", mac, address: "2001:db8::77", mac: mac, at: 1300, queries: 3)])
        let seen = try store.sightings(since: 0)
        #expect(
            seen == [
                ClientSighting(
                    profile: "kid", client: mac, address: "2001:db8::77", mac: mac, firstSeen: 1000, lastSeen: 1300,
                    queries: 8),
                sighting("teen", "192.168.1.30", address: "192.168.1.30", at: 1000, queries: 2),
            ])
        // A late flush never moves the last sighting back.
        try store.recordSightings([sighting("kid", mac, address: nil, mac: mac, at: 1200, queries: 1)])
        #expect(try store.sightings(since: 1250).map(\.lastSeen) == [1300])
        #expect(try store.sightings(since: 1250).first?.address == "2001:db8::77")
    }

    @Test func onlyDevicesSeenSinceTheCutOffAreListedAndPruned() throws {
        let fixture = try StoreFixture()
        let store = fixture.store
        try store.recordSightings([
            sighting("kid", "10.0.0.1", address: "10.0.0.1", at: 100, queries: 1),
            sighting("kid", "10.0.0.2", address: "10.0.0.2", at: 4000, queries: 1),
            sighting("kid", "10.0.0.3", address: "10.0.0.3", at: 5000, queries: 1),
        ])
        // Most recent first.
        #expect(try store.sightings(since: 3600).map(\.client) == ["10.0.0.3", "10.0.0.2"])
        #expect(try store.pruneSightings(before: 3600) == 1)
        #expect(try store.sightings(since: 0).count == 2)
        try store.recordSightings([])
        #expect(try store.sightings(since: 0).count == 2)
    }
}
