import DNSUpstream
import DNSWire
import DomainMatch
import TestSupport
import Testing

/// What the test dnsmasq answers for `*.example.test` (it refuses every other name).
private let dnsmasqAnswer = "192.0.2.1"

/// Forwarding to a real resolver, dnsmasq, over UDP and TCP.
@Suite(.serialized, .blocking) struct DnsmasqTests {
    @Test func answersOverUDP() throws {
        let dnsmasq = try DnsmasqUpstream(["--address=/example.test/\(dnsmasqAnswer)"])
        try withHarness(upstreams: [upstream("127.0.0.1:\(dnsmasq.port)")]) { harness throws in
            let outcome = try harness.resolve("www.example.test")
            #expect(outcome.address == dnsmasqAnswer)
            let message = try DNSMessage.parse(try #require(outcome.reply))
            #expect(message.header.isResponse && message.header.recursionDesired)
            let expected = try DNSName("www.example.test")
            #expect(message.questions.first?.name == expected)
            #expect(try harness.onLoop { $0.streamConnectsStarted } == 0)
        }
    }

    @Test func answersOverTCPOnOneReusedConnection() throws {
        let dnsmasq = try DnsmasqUpstream(["--address=/example.test/\(dnsmasqAnswer)"])
        try withHarness(upstreams: [upstream("tcp://127.0.0.1:\(dnsmasq.port)")]) { harness throws in
            #expect(try harness.resolve("a.example.test").address == dnsmasqAnswer)
            let names = (0..<20).map { "n\($0).example.test" }
            let outcomes = try harness.resolveAll(names)
            #expect(outcomes.allSatisfy { $0.address == dnsmasqAnswer })
            for (name, outcome) in zip(names, outcomes) {
                let message = try DNSMessage.parse(try #require(outcome.reply))
                let expected = try DNSName(name)
                #expect(message.questions.first?.name == expected)
            }
            #expect(try harness.onLoop { $0.streamConnectsStarted } == 1)
        }
    }

    @Test func refusedFromARealServerFailsOverToTheNext() throws {
        let dnsmasq = try DnsmasqUpstream(["--address=/example.test/\(dnsmasqAnswer)"])
        try withHarness { harness throws in
            let fake = try FakeUpstream(on: harness.serverLoop, behavior: .answer(.noError))
            // dnsmasq has no upstream of its own: it refuses names outside example.test.
            let list = [upstream("127.0.0.1:\(dnsmasq.port)"), upstream(fake.spec)]
            #expect(try harness.resolve("elsewhere.org", upstreams: list).address == "192.0.2.7")
            #expect(harness.events.value == [.failed(list[0], .rcode(.refused))])
        }
    }
}
