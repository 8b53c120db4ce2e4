import TestSupport

/// One question of the load, from one device, and what its answer must be.
struct DNSAsk: CustomStringConvertible {
    enum Expected {
        /// NXDOMAIN with EDE 15 under every policy the device's profile can have.
        case blocked
        /// NOERROR; with this IPv4 address among the answers when given.
        case resolved(String?)
        /// One of the two names the local policies alternate on: judged by the timeline.
        case swap
    }

    let name: String
    /// 1 (A) or 28 (AAAA).
    let type: UInt16
    let client: String
    let expected: Expected

    var isHit: Bool { name == SoakNames.hit }
    var description: String { "\(name) \(type == 1 ? "A" : "AAAA") from \(client)" }

    /// A question for `client`'s profile: new names for the cache to evict (the largest
    /// share), fixed allowed names, names blocked under every policy, and for the local
    /// device the swap names, for the synced one the hit name.
    static func next(for client: String, using generator: inout SeededGenerator) -> DNSAsk {
        let type: UInt16 = Int.random(in: 0..<5, using: &generator) == 0 ? 28 : 1
        let local = client == SoakNames.localClient
        let roll = Int.random(in: 0..<100, using: &generator)
        func ask(_ name: String, _ expected: Expected) -> DNSAsk {
            DNSAsk(name: name, type: type, client: client, expected: expected)
        }
        switch roll {
        case 0..<40:
            return ask(
                SoakNames.wild(Int.random(in: 0..<20_000, using: &generator)),
                .resolved(type == 1 ? SoakNames.wildAddress : nil))
        case 40..<60:
            let (name, address) = SoakNames.allowed.randomElement(using: &generator)!
            return ask(name, .resolved(type == 1 ? address : nil))
        case 60..<80:
            return ask(
                (local ? SoakNames.localBlocked : SoakNames.syncedBlocked).randomElement(using: &generator)!, .blocked)
        default:
            return local
                ? ask(Bool.random(using: &generator) ? SoakNames.swapA : SoakNames.swapB, .swap)
                : ask(SoakNames.hit, .blocked)
        }
    }

    /// Checks `outcome` (nil: no answer) and books it: a block of the hit name is a hit.
    func judge(
        _ outcome: DNSProbe.Outcome?, before: PolicyTimeline.Moment, after: PolicyTimeline.Moment, sentAt: Double,
        via: String, ledger: SoakLedger
    ) {
        guard let outcome else {
            ledger.unanswered("\(via) \(self)")
            return
        }
        let blockedExpected: Bool
        switch expected {
        case .blocked: blockedExpected = true
        case .resolved(let address):
            if case .resolved(let addresses) = outcome, address.map(addresses.contains) ?? true {
                ledger.count(.answersChecked)
            } else {
                ledger.wrong("\(via) \(self): \(outcome), expected an answer\(address.map { " with \($0)" } ?? "")")
            }
            return
        case .swap:
            guard let expected = PolicyTimeline.expectsBlocked(name, before: before, after: after, sentAt: sentAt)
            else { return }
            ledger.count(.swapAnswersChecked)
            blockedExpected = expected
        }
        if blockedExpected == outcome.isBlocked, blockedExpected || isAnswer(outcome) {
            ledger.count(.answersChecked)
            if isHit { ledger.hit(.dns) }
        } else {
            ledger.wrong(
                "\(via) \(self): \(outcome), expected \(blockedExpected ? "a block" : "an answer") (policy generation \(before.generation))"
            )
        }
    }

    private func isAnswer(_ outcome: DNSProbe.Outcome) -> Bool { if case .resolved = outcome { true } else { false } }
}
