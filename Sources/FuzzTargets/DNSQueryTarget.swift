import DNSWire

/// A DNS message as a client query (`DNSQuery.parse`, the proxy's hot path).
enum DNSQueryTarget {
    static let target = FuzzTarget(
        "dns-query",
        "a query that parses re-encodes to the same header, question bytes and EDNS; a response made for it "
            + "matches its question; a rejection names an offset inside the packet"
    ) { packet throws(PropertyViolation) in
        let query: DNSQuery
        do throws(DNSWireError) {
            query = try DNSQuery.parse(packet)
        } catch {
            try DNSChecks.errorPointsInside(error, packet)
            return
        }
        try questionIsLiteral(query, packet)
        try reencodes(query)
        try responseMatches(query)
        try agreesWithFullParse(query, packet)
    }

    /// The question at offset 12 cannot be compressed (a pointer there has nowhere to point),
    /// so its bytes are the name, type and class exactly as written.
    static func questionIsLiteral(_ query: DNSQuery, _ packet: [UInt8]) throws(PropertyViolation) {
        let question = query.question
        try check(
            query.questionEnd == DNSHeader.byteCount + question.name.wire.count + 4,
            "questionEnd \(query.questionEnd) for a \(question.name.wire.count)-byte name")
        var writer = DNSWriter()
        writer.writeQuestion(question, compress: false)
        try check(
            Array(packet[DNSHeader.byteCount..<query.questionEnd]) == writer.bytes,
            "question bytes differ from their re-encoding")
        try check(query.matchesQuestion(in: packet), "a query does not match its own question")
        try DNSChecks.presentationRoundTrips(question.name)
    }

    static func reencodes(_ query: DNSQuery) throws(PropertyViolation) {
        var writer = DNSMessageWriter(header: query.header, edns: query.edns)
        writer.addQuestion(query.question)
        let bytes = writer.finish(maxSize: .max)
        let again: DNSQuery
        do {
            again = try DNSQuery.parse(bytes)
        } catch {
            throw PropertyViolation(problem: "re-encoded query does not parse: \(error)")
        }
        try check(again.header.id == query.header.id, "id changed")
        try check(again.header.flags == query.header.flags, "flags changed")
        try check(again.question.name.wire == query.question.name.wire, "question name bytes changed")
        try check(again.question == query.question, "question changed")
        try check(again.edns == query.edns, "EDNS changed: \(String(describing: again.edns))")
        try check(again.questionEnd == query.questionEnd, "question length changed")
    }

    /// What the proxy sends back must be a response to exactly this question.
    static func responseMatches(_ query: DNSQuery) throws(PropertyViolation) {
        let edns = query.edns.map { _ in EDNS() }
        let response = DNSMessageWriter(responseTo: query, rcode: .nxDomain, edns: edns).finish(maxSize: .max)
        try check(query.matchesQuestion(in: response), "the response does not match the query's question")
        let message: DNSMessage
        do {
            message = try DNSMessage.parse(response)
        } catch {
            throw PropertyViolation(problem: "the response does not parse: \(error)")
        }
        try check(
            message.header.isResponse && message.header.id == query.header.id, "response header \(message.header)")
        try check(message.questions == [query.question], "response question changed")
        try check(message.rcode == .nxDomain, "response rcode \(message.rcode)")
        let limit = query.udpResponseLimit()
        try check((512...1232).contains(limit), "UDP response limit \(limit)")
        let error = DNSPacket.errorResponse(to: query.header, rcode: .formErr)
        try check(
            (try? DNSHeader(error))?.id == query.header.id && error.count == DNSHeader.byteCount,
            "error response of \(error.count) bytes")
    }

    /// Where the full parser accepts the same packet, both see the same question and EDNS.
    static func agreesWithFullParse(_ query: DNSQuery, _ packet: [UInt8]) throws(PropertyViolation) {
        guard let message = try? DNSMessage.parse(packet) else { return }
        try check(message.questions == [query.question], "full parse sees other questions")
        try check(message.edns == query.edns, "full parse sees other EDNS")
    }
}
