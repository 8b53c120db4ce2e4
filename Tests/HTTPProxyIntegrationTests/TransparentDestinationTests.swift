import Foundation
import Glibc
import TestFixtures
import TestSupport
import Testing

/// The destination check of transparent mode (docs/network.md#the-destination-check) with
/// the kernel's real redirect: a device that knows the address of a site the gateway
/// should not let it reach (the second host, 203.0.113.20 and 2001:db8:2::20) sends an
/// allowed name there (`curl --resolve dot.test:443:203.0.113.20`). The gateway's output
/// path counts every connection it opens to that host; it must stay at zero.
@Suite(.serialized, .blocking) struct TransparentDestinationTests {
    typealias LAN = TransparentNamespaceTests.LAN

    /// The four ways to the second host under an allowed name: IPv4 and IPv6, HTTPS and HTTP.
    static let detours: [(what: String, resolve: String, url: String)] = [
        ("v4 443", "dot.test:443:203.0.113.20", "https://dot.test/"),
        ("v6 443", "dot.test:443:[2001:db8:2::20]", "https://dot.test/"),
        ("v4 80", "dot.test:80:203.0.113.20", "http://dot.test/"),
        ("v6 80", "dot.test:80:[2001:db8:2::20]", "http://dot.test/"),
    ]

    /// `connect` (the default): each detour reaches dot.test's own host instead. An address
    /// as the server name is an IP literal, and an ECH hello under a provider's public name
    /// is refused; both with their hits.
    @Test func connectSendsAnAllowedNameToItsOwnAddressNeverTheDialledOne() throws {
        let lan = try LAN()
        defer { lan.stop() }
        let origins = try [
            lan.origin("203.0.113.10", port: 443, marker: "dot.test's own host"),
            lan.origin("203.0.113.10", port: 80, marker: "dot.test's own host"),
        ]
        let second = try [
            lan.origin("203.0.113.20", port: 443, marker: "the second host"),
            lan.origin("203.0.113.20", port: 80, marker: "the second host"),
        ]
        defer { for server in origins + second { server.stop() } }

        for detour in Self.detours {
            let result = try lan.curl(["--resolve", detour.resolve, detour.url], "detour-\(detour.what)")
            #expect(result.status == 0, "\(detour.what): \(result.output)\n\(lan.gate.log)")
            #expect(result.output == "dot.test's own host", "\(detour.what): \(result.output)")
        }
        #expect(try lan.connectionsToSecondHost() == 0, "the gateway never opened a connection to the second host")
        #expect(second.map(\.connectionsAccepted) == [0, 0])

        // The counter counts: a name whose own host it is goes there.
        let own = try lan.curl(["-k", "--resolve", "second.test:443:203.0.113.10", "https://second.test/"], "own")
        #expect(own.output == "the second host", "\(own.output)")
        #expect(try lan.connectionsToSecondHost() == 1)

        // An address as the server name (RFC 6066 forbids it; openssl sends what it is given).
        let literal = try lan.net.exec(
            in: lan.net.device,
            ["timeout", "8", "openssl", "s_client", "-connect", "203.0.113.20:443", "-servername", "203.0.113.20"])
        let refused = try SpawnedServer.run(
            [literal.path] + literal.arguments, logFile: lan.scratch.path("literal.log"))
        #expect(refused.status != 0, "\(refused.output)")
        #expect(refused.output.contains("access denied"), "\(refused.output)")

        // A hello offering ECH under Cloudflare's public name, sent to dot.test's own host.
        let socket = try lan.net.inside(lan.net.device) { try ProxyClient(host: "203.0.113.10", port: 443, timeout: 6) }
        let accepted = origins[0].connectionsAccepted
        socket.send(TLSClientHello.record(serverName: "cloudflare-ech.com", ech: .outer))
        #expect(
            socket.readUntilClosedOrReset() == [0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x31], "an access_denied alert")
        #expect(origins[0].connectionsAccepted == accepted, "nothing went on")
        #expect(try lan.connectionsToSecondHost() == 1)

        let hits = try lan.stopGateAndReadHits()
        #expect(hits.filter { $0.reason.hasPrefix("circumvention:destination") }.isEmpty, "\(hits)")
        let literalHits = hits.filter { $0.reason == "ip_literal" }
        #expect(literalHits.map(\.domain) == ["203.0.113.20"], "\(hits)")
        let ech = hits.filter { $0.reason == "circumvention:ech" }
        #expect(ech.map(\.domain) == ["cloudflare-ech.com"], "\(hits)")
        #expect((literalHits + ech).allSatisfy { $0.source == "transparent" }, "\(hits)")
    }

    /// `verify`: each detour is refused with a `circumvention:destination` hit (a TLS alert,
    /// or the block page); the name at its own host, over IPv4 and IPv6, goes through to the
    /// address dialled.
    @Test func verifyRefusesAnAllowedNameAtAnAddressItDoesNotHave() throws {
        let lan = try LAN(destination: "verify")
        defer { lan.stop() }
        try lan.serveFile()
        let plain = try lan.origin("203.0.113.10", port: 80, marker: "dot.test's own host")
        let second = try [
            lan.origin("203.0.113.20", port: 443, marker: "the second host"),
            lan.origin("203.0.113.20", port: 80, marker: "the second host"),
        ]
        defer { for server in second + [plain] { server.stop() } }

        for detour in Self.detours {
            let result = try lan.curl(["--resolve", detour.resolve, detour.url], "detour-\(detour.what)")
            if detour.url.hasPrefix("https") {
                #expect(result.status == 35, "\(detour.what): a TLS failure, got \(result.status): \(result.output)")
                #expect(result.output.lowercased().contains("access denied"), "\(detour.what): \(result.output)")
            } else {
                #expect(result.output.contains("does not belong to this site"), "\(detour.what): \(result.output)")
            }
        }
        #expect(try lan.connectionsToSecondHost() == 0, "the gateway never opened a connection to the second host")
        #expect(second.map(\.connectionsAccepted) == [0, 0])

        for (family, address) in [("v4", "203.0.113.10"), ("v6", "[2001:db8:2::10]")] {
            let out = lan.scratch.path("out-\(family).bin")
            let fetched = try lan.curl(
                ["--resolve", "dot.test:443:\(address)", "-o", out, "https://dot.test/file.bin"], "own-\(family)")
            #expect(fetched.status == 0, "\(family): \(fetched.output)\n\(lan.gate.log)")
            #expect((try? Data(contentsOf: URL(fileURLWithPath: out))) == Data(lan.body), "\(family): byte for byte")
        }
        let page = try lan.curl(["--resolve", "dot.test:80:203.0.113.10", "http://dot.test/"], "own-80")
        #expect(page.output == "dot.test's own host", "\(page.output)")

        let hits = try lan.stopGateAndReadHits().filter { $0.reason == "circumvention:destination" }
        #expect(hits.allSatisfy { $0.domain == "dot.test" && $0.source == "transparent" }, "\(hits)")
        #expect(Set(hits.map(\.client)) == ["198.51.100.10", "2001:db8:1::10"], "\(hits)")
        #expect(hits.map(\.count).reduce(0, +) == 4, "\(hits)")
    }

    /// Chromium offers GREASE ECH when it has no ECH key for a site: its real name in the
    /// clear, decided on it, and the hello reaches the name's host whole. The host here
    /// records what arrives and never answers, so the browser is stopped by its timeout.
    @Test func aBrowsersGreaseECHHelloPassesToTheAllowedHost() throws {
        let lan = try LAN()
        defer { lan.stop() }
        let origin = try lan.net.inside(lan.net.gateway) { try RawOrigin(host: "203.0.113.30", port: 443) }
        for attempt in 1...3 where origin.received().isEmpty {
            _ = try lan.chromium("https://capture.test/", "chromium-grease-\(attempt)", seconds: 8)
        }
        let hello = origin.received()
        let extensions = Self.extensions(ofClientHelloRecord: hello)
        #expect(extensions != nil, "a ClientHello reached the host: \(hello.count) bytes\n\(lan.gate.log)")
        let sni = extensions?.first { $0.type == 0 }?.data ?? []
        #expect(String(decoding: sni.dropFirst(5), as: UTF8.self) == "capture.test", "the real name in the clear")
        let ech = extensions?.first { $0.type == 0xFE0D }?.data
        #expect(ech?.first == 0, "an encrypted_client_hello extension of the outer kind")
        let hits = try lan.stopGateAndReadHits()
        #expect(hits.filter { $0.reason.hasPrefix("circumvention") }.isEmpty, "\(hits)")
    }

    /// The extensions of a ClientHello that came in one TLS record (RFC 8446 §4.1.2), or nil.
    static func extensions(ofClientHelloRecord bytes: [UInt8]) -> [(type: Int, data: ArraySlice<UInt8>)]? {
        func u16(_ at: Int) -> Int? { at + 1 < bytes.count ? Int(bytes[at]) << 8 | Int(bytes[at + 1]) : nil }
        guard bytes.count > 5 + 4 + 34, bytes[0] == 0x16, bytes[5] == 0x01 else { return nil }
        var at = 5 + 4 + 2 + 32
        at += 1 + Int(bytes[at])  // session id
        guard let suites = u16(at) else { return nil }
        at += 2 + suites
        guard at < bytes.count else { return nil }
        at += 1 + Int(bytes[at])  // compression methods
        guard let length = u16(at), at + 2 + length <= bytes.count else { return nil }
        var found: [(type: Int, data: ArraySlice<UInt8>)] = []
        var next = at + 2
        while next + 4 <= at + 2 + length {
            guard let type = u16(next), let size = u16(next + 2), next + 4 + size <= bytes.count else { return nil }
            found.append((type, bytes[(next + 4)..<(next + 4 + size)]))
            next += 4 + size
        }
        return found
    }
}
