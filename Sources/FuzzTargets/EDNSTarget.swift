import DNSWire

/// EDNS OPT options (RFC 6891) and Extended DNS Errors (RFC 8914). The input is the OPT
/// record's fields and RDATA; the target wraps them in a query for `a.example A`, so every
/// input reaches the option parser instead of dying at the header.
enum EDNSTarget {
    static let target = FuzzTarget(
        "edns",
        "OPT options that parse re-encode to the same options, payload size, version, flags and extended rcode; "
            + "Extended DNS Errors that parse re-encode to the same code and text"
    ) { input throws(PropertyViolation) in
        var choices = InputChoices(input)
        let payloadSize = choices.uint16()
        let ttlField = UInt32(choices.uint16()) << 16 | UInt32(choices.uint16())
        let rdata = Array(choices.rest.prefix(0xFFFF))
        let packet = query(payloadSize: payloadSize, ttlField: ttlField, rdata: rdata)
        let message: DNSMessage
        do throws(DNSWireError) {
            message = try DNSMessage.parse(packet)
        } catch {
            try DNSChecks.errorPointsInside(error, packet)
            return
        }
        guard let edns = message.edns else {
            throw PropertyViolation(problem: "an OPT record parsed into a message without EDNS")
        }
        try check(edns.udpPayloadSize == payloadSize, "payload size \(edns.udpPayloadSize) ≠ \(payloadSize)")
        try check(edns.options.reduce(0) { $0 + 4 + $1.data.count } == rdata.count, "options do not fill the RDATA")
        try check(edns.wireLength == 11 + rdata.count, "wireLength \(edns.wireLength) for \(rdata.count) bytes")
        try reencodes(message)
        try extendedErrorsReencode(edns)
    }

    static func query(payloadSize: UInt16, ttlField: UInt32, rdata: [UInt8]) -> [UInt8] {
        var packet: [UInt8] = [0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1]
        packet += [1, 0x61, 7] + Array("example".utf8) + [0, 0, 1, 0, 1]
        packet += [0, 0, 41, UInt8(payloadSize >> 8), UInt8(payloadSize & 0xFF)]
        packet += (0..<4).map { UInt8(truncatingIfNeeded: ttlField >> (24 - 8 * UInt32($0))) }
        packet += [UInt8(rdata.count >> 8), UInt8(rdata.count & 0xFF)] + rdata
        return packet
    }

    static func reencodes(_ message: DNSMessage) throws(PropertyViolation) {
        let again: DNSMessage
        do {
            again = try DNSMessage.parse(message.serialized(maxSize: .max))
        } catch {
            throw PropertyViolation(problem: "re-encoded OPT does not parse: \(error)")
        }
        try check(again.edns == message.edns, "re-encoded EDNS differs")
        try check(again.rcode == message.rcode, "extended rcode \(again.rcode) ≠ \(message.rcode)")
        let query: DNSQuery
        do {
            query = try DNSQuery.parse(message.serialized(maxSize: .max))
        } catch {
            throw PropertyViolation(problem: "re-encoded OPT does not parse as a query: \(error)")
        }
        try check(query.edns == message.edns, "the query parser reads other EDNS")
    }

    static func extendedErrorsReencode(_ edns: EDNS) throws(PropertyViolation) {
        let errors: [ExtendedDNSError]
        do {
            errors = try edns.extendedErrors()
        } catch {
            let short = edns.options.contains { $0.code == .extendedError && $0.data.count < 2 }
            try check(short, "Extended DNS Error rejected though every one has its INFO-CODE: \(error)")
            return
        }
        var rebuilt = EDNS()
        for error in errors { rebuilt.addExtendedError(error) }
        let again: [ExtendedDNSError]
        do {
            again = try rebuilt.extendedErrors()
        } catch {
            throw PropertyViolation(problem: "re-encoded Extended DNS Errors do not parse: \(error)")
        }
        try check(again == errors, "Extended DNS Errors \(errors) re-encode as \(again)")
    }
}
