import DNSWire
import DomainMatch
import Zoneinfo

/// Storage one loop thread reuses from query to query, so that reading a question in
/// place allocates nothing (docs/performance.md#allocations-per-query): what a query made
/// from it shares the storage, and the next query finds it unshared again, unless the
/// query still lives (waiting for an upstream), when writing it makes a copy as any array
/// does. Loop-confined: one per `QueryDriver`, never shared between threads.
public final class QueryScratch {
    /// The question's wire name (`DNSQuery.parseCommon`).
    var question: [UInt8] = []
    /// The matcher's name of it (`DomainName(wire:storage:)`).
    var name: [UInt8] = []
    /// Names of records copied into an answer (`DNSMessageWriter.addRecord(copying:)`).
    var records: [UInt8] = []
    /// Rewrite targets as names, parsed once per loop: a handful, the safe-search table's.
    private var targets: [DomainName: DNSName] = [:]
    /// An answer the pipeline wrote itself (a block), until the server copies it into a
    /// send slot: valid until the loop's next query.
    var answer: [UInt8] = []
    /// The policy zone's wall clock, read from the zone once per offset change.
    var clock = ZoneClock()

    public init() {
        // A name is at most 255 bytes in either form; an answer made here fits a UDP answer.
        question.reserveCapacity(256)
        name.reserveCapacity(256)
        records.reserveCapacity(256)
        answer.reserveCapacity(Int(AnswerBuilder.udpPayload))
    }

    /// `target` as a name on the wire, from `targets` once made; nil when it cannot be one.
    func targetName(_ target: DomainName) -> DNSName? {
        if let name = targets[target] { return name }
        guard let name = try? DNSName(wire: target.wire) else { return nil }
        // Bounded, whatever a policy names.
        if targets.count < 64 { targets[target] = name }
        return name
    }

    /// `answer`'s storage, unshared, for a writer to write over; give the result back.
    func takeAnswer() -> [UInt8] {
        defer { answer = [] }
        return answer
    }
}
