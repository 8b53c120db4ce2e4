import DNSWire

/// Checks shared by the DNS targets.
enum DNSChecks {
    /// A rejection must say where: every offset it carries lies in the packet parsed, and a
    /// count it names is one the header could hold.
    static func errorPointsInside(_ error: DNSWireError, _ packet: [UInt8]) throws(PropertyViolation) {
        let place: Int?
        switch error {
        case .shortHeader(let length):
            try check(length == packet.count && length < DNSHeader.byteCount, "\(error) for \(packet.count) bytes")
            place = nil
        case .countTooLarge(_, let count), .questionCount(let count):
            try check((0...0xFFFF).contains(count), "\(error): impossible count")
            place = nil
        case .truncated(_, let offset), .trailingBytes(let offset), .rdataLength(_, let offset),
            .labelTooLong(let offset), .nameTooLong(let offset), .badLabelType(let offset), .pointerLoop(let offset),
            .pointerForward(let offset), .pointerOutOfBounds(let offset), .tooManyPointers(let offset),
            .compressedName(let offset), .multipleOPT(let offset), .optNotRoot(let offset),
            .badEDNSOption(let offset):
            place = offset
        case .badSvcParams(let reason):
            switch reason {
            case .truncatedKey(let offset), .keyOrder(_, let offset), .valuePastEnd(_, let offset),
                .badValue(_, let offset):
                place = offset
            case .mandatoryKeyMissing: place = nil
            }
        case .emptyLabel, .badEscape:
            throw PropertyViolation(problem: "\(error): a text-form error from a wire parser")
        case .optOutsideAdditional, .badExtendedError:
            place = nil
        }
        if let place {
            try check((0...packet.count).contains(place), "\(error) points outside the \(packet.count) bytes")
        }
    }

    /// Every name's text form parses back to the same wire bytes (escapes are exact).
    static func presentationRoundTrips(_ name: DNSName) throws(PropertyViolation) {
        let text = name.presentation
        let back: DNSName
        do {
            back = try DNSName(text)
        } catch {
            throw PropertyViolation(problem: "name \(text) does not parse back: \(error)")
        }
        try check(back.wire == name.wire, "name \(text) parses back as other bytes \(back.wire) ≠ \(name.wire)")
    }

    /// The names a record holds, owner first.
    static func names(in record: ResourceRecord) -> [DNSName] {
        var names = [record.name]
        switch record.rdata {
        case .ns(let name), .cname(let name), .ptr(let name), .dname(let name): names.append(name)
        case .mx(let mx): names.append(mx.exchange)
        case .soa(let soa): names += [soa.mname, soa.rname]
        case .srv(let srv): names.append(srv.target)
        case .svcb(let svcb), .https(let svcb): names.append(svcb.target)
        default: break
        }
        return names
    }
}
