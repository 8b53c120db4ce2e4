import Foundation
import TestSupport

/// The real clients, now and then (each is a process, and the machine is shared): `dig`
/// over UDP and TCP from either device, `curl` through the proxy, plain and tunnelled, and
/// for the synced device to the hit name.
final class RealClients: @unchecked Sendable {
    private let home: SoakGateway
    private let ledger: SoakLedger
    private let timeline: PolicyTimeline
    private var generator: SeededGenerator
    private var turn = 0

    init(home: SoakGateway, ledger: SoakLedger, timeline: PolicyTimeline, seed: UInt64) {
        self.home = home
        self.ledger = ledger
        self.timeline = timeline
        generator = SeededGenerator(seed: seed)
    }

    func step() {
        turn += 1
        ledger.count(.realClients)
        let client = turn % 4 < 2 ? SoakNames.localClient : SoakNames.syncedClient
        if turn % 2 == 0 { dig(from: client) } else { curl(from: client) }
    }

    private func dig(from client: String) {
        let ask = DNSAsk.next(for: client, using: &generator)
        let before = timeline.now
        let sentAt = monotonicSeconds()
        var options = ["-b", client]
        if Bool.random(using: &generator) { options.append("+tcp") }
        let answer = try? Dig.query(ask.name, ask.type == 1 ? "A" : "AAAA", port: home.dnsPort, options: options)
        let outcome: DNSProbe.Outcome? = answer.flatMap { answer in
            guard let status = answer.status else { return nil }
            if status == "NXDOMAIN", let block = answer.extendedErrors.first(where: { $0.hasPrefix("15 (Blocked)") }) {
                return .blocked(block)
            }
            guard status == "NOERROR" else { return .other("dig status \(status)") }
            return .resolved(
                answer.answers.compactMap { line in
                    let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                    return fields.count >= 5 && fields[3] == "A" ? String(fields[4]) : nil
                })
        }
        ask.judge(
            outcome, before: before, after: timeline.now, sentAt: sentAt, via: "dig \(options.last!)", ledger: ledger)
    }

    private func curl(from client: String) {
        let proxy = ["-x", "http://127.0.0.1:\(home.proxyPort)", "--interface", client]
        let origin = "http://origin.test:\(home.origin.port)/curl"
        let hit = client == SoakNames.syncedClient && Bool.random(using: &generator)
        let tunnel = Bool.random(using: &generator) ? ["-p"] : []
        let target = hit ? "http://\(SoakNames.hit)/curl" : origin
        guard let result = try? Curl.run(proxy + (hit ? [] : tunnel) + [target], timeout: 8),
            result.exitCode == 0 || result.status != 0
        else {
            return ledger.unanswered("curl \(tunnel.joined()) \(target) from \(client)")
        }
        if hit {
            guard result.status == 403, result.output.contains("X-Phosra-Block: blocked_domain:") else {
                return ledger.wrong("curl \(target) from \(client): \(result)")
            }
            ledger.hit(.proxy)
        } else if result.status != 200 || !result.body.hasPrefix("origin saw GET") {
            return ledger.wrong("curl \(tunnel.joined()) \(target) from \(client): \(result)")
        }
        ledger.count(.answersChecked)
    }
}
