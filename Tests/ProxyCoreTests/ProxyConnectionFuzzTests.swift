import Bytes
import DomainMatch
import TestFixtures
import Testing

@testable import ProxyCore

/// Nothing a client or an origin sends can trap the state machine (docs/proxy.md#bad-input-and-limits): seeded
/// random mutations of real requests and responses, fed in random pieces, in every state.
@Suite struct ProxyConnectionFuzzTests {
    static let requests = [
        "GET http://example.org/a HTTP/1.1\r\nHost: example.org\r\nConnection: keep-alive\r\n\r\n",
        "CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n",
        "POST http://example.org/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        "POST http://example.org/ HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
        "GET /proxy.pac HTTP/1.0\r\n\r\n",
    ]
    static let responses = [
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\n\r\nstream",
    ]

    private func mutate(_ text: String, _ random: inout SeededGenerator) -> [UInt8] {
        var bytes = Array(text.utf8)
        for _ in 0..<Int.random(in: 0...4, using: &random) where !bytes.isEmpty {
            let index = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0...3, using: &random) {
            case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
            case 1: bytes.remove(at: index)
            case 2:
                bytes.insert(
                    contentsOf: [0x0D, 0x0A, 0x3A, 0x20, 0x00, 0xFF].shuffled(using: &random).prefix(2), at: index)
            default: bytes.insert(contentsOf: bytes[index...].prefix(40), at: index)
            }
        }
        return bytes
    }

    @Test func randomInputNeverTraps() {
        let fixture = ProxyFixture()
        var random = SeededGenerator(seed: 20_261_130)
        for round in 0..<3000 {
            var connection = fixture.connection()
            var now: UInt64 = 1_000_000_000
            var input = mutate(Self.requests[round % Self.requests.count], &random)
            if round % 7 == 0 { input += TLSClientHello.record(serverName: round % 2 == 0 ? "adult.example" : nil) }
            if round % 50 == 0 { input += (0..<20_000).map { _ in UInt8.random(in: 0...255, using: &random) } }
            while !input.isEmpty {
                let take = Int.random(in: 1...max(1, input.count), using: &random)
                _ = connection.receive(Array(input.prefix(take)), fixture.env(now: now))
                input.removeFirst(take)
                now += UInt64.random(in: 0...3_000_000_000, using: &random)
                switch connection.state {
                case .resolving:
                    _ = connection.lookupFinished(
                        round % 5 == 0 ? .failed : .addresses([IPAddress("192.0.2.7")!]),
                        fixture.env(now: now))
                case .connecting:
                    _ =
                        round % 11 == 0
                        ? connection.connectFailed(fixture.env(now: now)) : connection.connected(fixture.env(now: now))
                case .exchanging:
                    var response = mutate(Self.responses[round % Self.responses.count], &random)
                    while !response.isEmpty, case .exchanging = connection.state {
                        let piece = Int.random(in: 1...response.count, using: &random)
                        connection.upstreamIn.writeBytes(response.prefix(piece))
                        _ = connection.upstreamInput(fixture.env(now: now))
                        response.removeFirst(piece)
                    }
                    if round % 3 == 0 { _ = connection.upstreamClosed(fixture.env(now: now)) }
                default:
                    break
                }
                _ = connection.deadlinePassed(fixture.env(now: now))
                _ = connection.tick(fixture.env(now: now), lastActivity: now)
                _ = connection.takeClientOutput()
                _ = connection.takeUpstreamOutput()
            }
            _ = connection.clientClosed(fixture.env(now: now))
            #expect(connection.clientIn.readableBytes <= ProxyLimits.headerBytes + ProxyLimits.readChunk)
        }
    }
}
