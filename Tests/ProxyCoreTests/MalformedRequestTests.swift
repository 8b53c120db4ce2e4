import TestFixtures
import Testing

@testable import ProxyCore

/// The shared table of malformed heads through the proxy's state machine: each request is
/// answered 400 (431 for a head too large) naming what HTTP1 found, no origin is looked
/// up or contacted, and the connection ends after the response.
@Suite struct MalformedRequestTests {
    let fixture = ProxyFixture()

    @Test(arguments: MalformedHeads.requests)
    func eachIsRefusedWithItsStatus(_ head: MalformedHead) throws {
        var connection = fixture.connection()
        let actions = connection.receive(try #require(head.request), fixture.env())
        let output = connection.takeClientOutput()
        let status = head.requestStatus
        #expect(
            output.hasPrefix("HTTP/1.1 \(status) \(ProxyResponse.reasonPhrase(status))\r\n"), "\(output.prefix(80))")
        #expect(output.contains("phosra-gate: \(head.expected(headLimit: ProxyLimits.headerBytes))\n"))
        #expect(output.contains("Connection: close\r\n"))
        #expect(!actions.contains { if case .lookup = $0 { true } else if case .connect = $0 { true } else { false } })
        #expect(connection.state == .closing)
    }
}
