import DNSWire
import DomainMatch

/// What an upstream answer carries besides its question's chain, found once when it is
/// cached (docs/dns.md#what-answers-may-carry): the names it points at or gives records
/// of (MX, SRV, NS, HTTPS and SVCB targets, the owners of additional records), decided for
/// each client when it is served, and its records with a local address (DNS rebinding).
/// Nil for the common answer, which has none: serving it then costs one test.
///
/// Records are named by ordinal: their place in the answer, authority and additional
/// sections taken in turn, as `DNSMessage.parse` gives them back.
final class AnswerScreening: Sendable {
    /// Distinct names, each decided once per answer served.
    let names: [DomainName]
    /// A record that goes when its name is blocked.
    struct Reference: Sendable {
        let ordinal: UInt16
        let name: UInt16
    }
    let references: [Reference]
    /// The A and AAAA records (answer and additional) whose address `RebindingGuard.isLocal`.
    let localRecords: [UInt16]
    /// Records in the answer section: ordinals below it are answers.
    let answerCount: UInt16

    private init(names: [DomainName], references: [Reference], localRecords: [UInt16], answerCount: UInt16) {
        self.names = names
        self.references = references
        self.localRecords = localRecords
        self.answerCount = answerCount
    }

    /// The screening of `message` (its answer section already cut to the chain), or nil
    /// when it has nothing to screen.
    static func make(_ message: DNSMessage, rebinding: RebindingGuard) -> AnswerScreening? {
        var names: [DomainName] = []
        var references: [Reference] = []
        var local: [UInt16] = []
        var ordinal = 0
        func refer(_ name: DNSName) {
            guard let decided = DomainName(wire: name.wire) else { return }
            let index = names.firstIndex(of: decided) ?? names.count
            if index == names.count { names.append(decided) }
            references.append(Reference(ordinal: UInt16(truncatingIfNeeded: ordinal), name: UInt16(index)))
        }
        for (section, records) in [
            (DNSSection.answer, message.answers), (.authority, message.authorities), (.additional, message.additionals),
        ] {
            for record in records {
                defer { ordinal += 1 }
                // The owners of answer records are the chain, which inspection decides; the
                // authority's owners are zones, which lead nowhere.
                if section == .additional { refer(record.name) }
                if let target = target(of: record.rdata) { refer(target) }
                if section != .authority, let address = address(of: record.rdata), rebinding.isLocal(address) {
                    local.append(UInt16(truncatingIfNeeded: ordinal))
                }
            }
        }
        guard !references.isEmpty || !local.isEmpty else { return nil }
        return AnswerScreening(
            names: names, references: references, localRecords: local,
            answerCount: UInt16(truncatingIfNeeded: message.answers.count))
    }

    /// The name a record sends a client on to; nil for the root (an HTTPS or SVCB record's
    /// "the owner itself") and for types that send nowhere.
    static func target(of rdata: RData) -> DNSName? {
        let target: DNSName
        switch rdata {
        case .mx(let mx): target = mx.exchange
        case .srv(let srv): target = srv.target
        case .ns(let host): target = host
        case .svcb(let svcb), .https(let svcb): target = svcb.target
        default: return nil
        }
        return target.isRoot ? nil : target
    }

    static func address(of rdata: RData) -> IPAddress? {
        switch rdata {
        case .a(let address): return .v4(address.value)
        case .aaaa(let address): return .v6(high: address.high, low: address.low)
        default: return nil
        }
    }

    /// Cuts `message`'s answer section to its question's chain: the records of the question
    /// name and of each name its CNAMEs reach, and the DNAMEs (with their signatures) above
    /// one of those names. Anything else there was not asked for, and a client or a cache
    /// downstream could take it as an answer for a name nobody decided.
    static func keepChain(_ message: inout DNSMessage) {
        guard let question = message.questions.first?.name, !message.answers.isEmpty else { return }
        var chain = [question]
        for _ in 0..<message.answers.count {
            let current = chain[chain.count - 1]
            guard let record = message.answers.first(where: { $0.type == .cname && $0.name == current }),
                let target = record.rdata.cnameTarget, !chain.contains(target)
            else { break }
            chain.append(target)
        }
        let dnames = message.answers.filter { record in
            record.type == .dname && chain.contains { $0 != record.name && $0.isSubdomain(of: record.name) }
        }.map(\.name)
        message.answers.removeAll { record in
            if chain.contains(record.name) { return false }
            return !(dnames.contains(record.name) && (record.type == .dname || record.type == .rrsig))
        }
    }
}
