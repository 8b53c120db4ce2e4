import DomainMatch
import Testing

@testable import Policy

/// A hit's identity read back is what was written, for every client form and source, and
/// a cut identity reads without trapping.
@Suite struct HitIdentityTests {
    static let clients: [IPAddress?] = [IPAddress("192.168.1.20")!, IPAddress("2001:db8::1:2")!, nil]

    @Test(arguments: clients, [HitSource.dns, .proxy, .transparent, .firewall])
    func whatIsWrittenIsReadBack(client: IPAddress?, source: HitSource) throws {
        let decision = Decision(.block, .category, rule: "adult.example", category: .adult)
        for hit in [
            Hit(profile: "kid", name: "www.adult.example", decision: decision, client: client, source: source, time: 1),
            Hit(
                profile: "kid", name: try QueryName.parse("www.adult.example"), decision: decision, client: client,
                source: source, time: 1),
        ] {
            var bytes: [UInt8] = []
            HitIdentity.append(hit, to: &bytes)
            let fields = HitIdentity.decode(bytes)
            #expect(fields.profile == "kid" && fields.name == "www.adult.example")
            #expect(fields.reasonText == "category:adult")
            #expect(fields.client == client && fields.source == source)
        }
    }

    @Test func aCutIdentityReadsWithoutTrapping() {
        var bytes: [UInt8] = []
        HitIdentity.append(
            Hit(
                profile: "kid", name: "x.example", decision: Decision(.block, .downtime),
                client: IPAddress("2001:db8::1")!, source: .proxy, time: 1), to: &bytes)
        for count in 0..<bytes.count {
            let fields = HitIdentity.decode(Array(bytes.prefix(count)))
            #expect(fields.profile.count <= 3)
        }
    }
}
