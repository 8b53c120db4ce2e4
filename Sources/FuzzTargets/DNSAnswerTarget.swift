import DNSWire

/// A DNS message as an upstream answer (`DNSMessage.parse`: every record, SVCB/HTTPS
/// params, compressed names), and what the proxy does to one before forwarding it:
/// ECH removal, truncation to the client's size, TTL ageing.
enum DNSAnswerTarget {
    static let target = FuzzTarget(
        "dns-answer",
        "a message that parses re-encodes (compressed or not) to an equal message with the same name bytes; "
            + "the record walk agrees with the parse; ECH removal, truncation and TTL ageing keep it valid; "
            + "a rejection (compression loop, pointer out of bounds, …) names an offset inside the packet"
    ) { packet throws(PropertyViolation) in
        let message: DNSMessage
        do throws(DNSWireError) {
            message = try DNSMessage.parse(packet)
        } catch {
            try DNSChecks.errorPointsInside(error, packet)
            return
        }
        try reencodes(message)
        try cursorAgrees(message, packet)
        for record in message.answers + message.authorities + message.additionals {
            for name in DNSChecks.names(in: record) { try DNSChecks.presentationRoundTrips(name) }
        }
        try DNSAnswerEdits.removingECH(message, packet)
        try DNSAnswerEdits.truncation(message, packet)
        try DNSAnswerEdits.ttlAgeing(message, packet)
    }

    static func reencodes(_ message: DNSMessage) throws(PropertyViolation) {
        let exact = message.serialized(maxSize: .max, compress: false)
        for compress in [true, false] {
            let bytes = message.serialized(maxSize: .max, compress: compress)
            let again: DNSMessage
            do {
                again = try DNSMessage.parse(bytes)
            } catch {
                throw PropertyViolation(problem: "re-encoded message (compress: \(compress)) does not parse: \(error)")
            }
            try check(again == message, "re-encoded message (compress: \(compress)) differs")
            // Equality ignores letter case, as compression does (RFC 4343 §4.1: a name may
            // point at an earlier spelling); written without it, every byte must survive.
            if !compress {
                try check(
                    again.serialized(maxSize: .max, compress: false) == exact,
                    "re-encoded message has other name bytes")
            }
            // The first name is written whole, so the question keeps the client's letter case.
            try check(
                again.questions.first?.name.wire == message.questions.first?.name.wire,
                "re-encoded question (compress: \(compress)) changed its letter case")
        }
    }

    /// The allocation-free record walk the cache and truncation use sees the same records
    /// as the full parse, in the same order.
    static func cursorAgrees(_ message: DNSMessage, _ packet: [UInt8]) throws(PropertyViolation) {
        var types: [DNSType] = []
        var sawOPT = false
        do {
            var cursor = try DNSRecordCursor(packet)
            while let record = try cursor.next(in: packet) {
                if record.type == .opt { sawOPT = true } else { types.append(record.type) }
            }
        } catch {
            throw PropertyViolation(problem: "the record walk rejects a message the parser accepts: \(error)")
        }
        let parsed = (message.answers + message.authorities + message.additionals).map(\.rdata.type)
        // The parser keeps A/AAAA outside class IN, and empty UPDATE RDATA, as `.unknown`
        // with the record's own type, so the types line up one for one.
        try check(types == parsed, "record walk types \(types) ≠ parsed \(parsed)")
        try check(sawOPT == (message.edns != nil), "record walk and parse disagree on OPT")
    }
}
