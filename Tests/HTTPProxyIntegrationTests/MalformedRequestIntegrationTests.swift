import Foundation
import TestSupport
import Testing

/// The shared table of malformed heads through the real proxy: each request, sent raw on
/// its own connection, is answered 400 (431 for a head too large) naming what HTTP1 found,
/// then the connection ends; no origin is contacted and the daemon stays up.
@Suite(.serialized, .blocking) struct MalformedRequestIntegrationTests {
    let fixture: ProxyFixture

    init() throws { fixture = try ProxyFixture() }

    @Test func eachMalformedRequestIsRefusedByName() throws {
        let gate = try fixture.start()
        for head in MalformedHeads.requests {
            let client = try fixture.client()
            client.send(try #require(head.request))
            let answer = String(decoding: client.readToEnd() ?? [], as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 \(head.requestStatus) "), "\(head): \(answer.prefix(80))")
            #expect(answer.contains("phosra-gate: \(head.expected(headLimit: 16_384))\n"), "\(head)")
        }
        #expect(fixture.origin.connectionsAccepted == 0)
        #expect(gate.daemon.isRunning)
    }
}
