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
    /// An answer the pipeline wrote itself (a block), until the server copies it into a
    /// send slot: valid until the loop's next query.
    var answer: [UInt8] = []

    public init() {
        // A name is at most 255 bytes in either form; an answer made here fits a UDP answer.
        question.reserveCapacity(256)
        name.reserveCapacity(256)
        answer.reserveCapacity(Int(AnswerBuilder.udpPayload))
    }

    /// `answer`'s storage, unshared, for a writer to write over; give the result back.
    func takeAnswer() -> [UInt8] {
        defer { answer = [] }
        return answer
    }
}
