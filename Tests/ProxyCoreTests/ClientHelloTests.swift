import TestFixtures
import Testing

@testable import ProxyCore

@Suite struct ClientHelloTests {
    private func scan(_ bytes: [UInt8]) -> ClientHelloScan { bytes.withUnsafeBytes { ClientHello.scan($0) } }

    @Test func findsTheServerNameInOneRecord() {
        #expect(
            scan(TLSClientHello.record(serverName: "www.Example.org"))
                == .serverName("www.Example.org", offersECH: false))
    }

    @Test func aClientHelloSplitAcrossSegmentsNeedsMoreUntilComplete() {
        let hello = TLSClientHello.record(serverName: "split.example")
        for cut in [1, 2, 5, 6, 9, 40, hello.count - 1] {
            #expect(scan(Array(hello[..<cut])) == .needMore, "cut at \(cut)")
        }
        #expect(scan(hello) == .serverName("split.example", offersECH: false))
        #expect(
            scan(hello + [0x17, 0x03, 0x03]) == .serverName("split.example", offersECH: false),
            "bytes after it do not matter")
    }

    @Test func aClientHelloFragmentedAcrossRecordsIsReassembled() {
        let handshake = TLSClientHello.handshake(serverName: "fragments.example", padding: 300)
        for size in [1, 3, 50, 200] {
            let records = TLSClientHello.records(handshake, fragmentSize: size)
            #expect(scan(records) == .serverName("fragments.example", offersECH: false), "fragments of \(size)")
            #expect(scan(Array(records.dropLast(2))) == .needMore)
        }
    }

    /// RFC 9849: an `encrypted_client_hello` extension of the outer kind is an ECH offer,
    /// wherever it sits among the extensions (here before the server name) and however the
    /// records are cut; the inner kind in the clear is not one; an empty one is malformed.
    @Test func anEncryptedClientHelloExtensionIsSeen() {
        #expect(
            scan(TLSClientHello.record(serverName: "cloudflare-ech.com", ech: .outer))
                == .serverName("cloudflare-ech.com", offersECH: true))
        let split = TLSClientHello.records(
            TLSClientHello.handshake(serverName: "www.example.org", ech: .outer), fragmentSize: 50)
        #expect(scan(split) == .serverName("www.example.org", offersECH: true))
        #expect(scan(Array(split.dropLast(1))) == .needMore)
        #expect(
            scan(TLSClientHello.record(serverName: "www.example.org", ech: .inner))
                == .serverName("www.example.org", offersECH: false))
        #expect(scan(TLSClientHello.record(serverName: nil, ech: .outer)) == .noServerName)

        #expect(scan(TLSClientHello.record(serverName: "www.example.org", ech: .empty)) == .malformed)
    }

    /// The extensions are read to their end: a server name followed by a broken extension
    /// is not trusted.
    @Test func aBrokenExtensionAfterTheServerNameIsMalformed() {
        var hello = TLSClientHello.record(serverName: "www.example.org", padding: 8)
        // The padding extension's length, claimed larger than what is left.
        hello[hello.count - 8 - 1] = 0x40
        #expect(scan(hello) == .malformed)
    }

    @Test func aClientHelloWithoutSNI() {
        #expect(scan(TLSClientHello.record(serverName: nil)) == .noServerName)
    }

    @Test func otherProtocolsAreNotTLS() {
        #expect(scan(Array("GET / HTTP/1.1\r\n".utf8)) == .notTLS)
        #expect(scan(Array("SSH-2.0-OpenSSH\r\n".utf8)) == .notTLS)
        #expect(scan([0x80, 0x2E, 0x01, 0x03, 0x01]) == .notTLS, "SSLv2-compatible hello")
        #expect(scan([0x16, 0x07]) == .notTLS, "not a TLS version")
        #expect(scan([]) == .needMore)
    }

    @Test func garbageInsideRecordsIsMalformedNeverATrap() {
        #expect(scan([0x16, 0x03, 0x01, 0x00, 0x00]) == .malformed, "an empty record")
        #expect(scan([0x16, 0x03, 0x01, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00]) == .malformed, "a ServerHello")
        var hello = TLSClientHello.record(serverName: "x.example")
        hello[5 + 4 + 34] = 0xFF  // a session id longer than the message
        #expect(scan(hello) == .malformed)
        // Every truncation and every single-byte corruption of a real hello: no trap.
        let real = TLSClientHello.record(serverName: "fuzz.example")
        for index in real.indices {
            _ = scan(Array(real[..<index]))
            for value: UInt8 in [0x00, 0x7F, 0xFF] {
                var corrupt = real
                corrupt[index] = value
                _ = scan(corrupt)
            }
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let length = Int.random(in: 0..<200, using: &random)
            _ = scan([0x16, 0x03] + (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
    }
}
