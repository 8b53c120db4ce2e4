/// What `RegistryRows` reports to: which rows are wanted, and their names.
protocol RegistrySink {
    /// Given an assignment's value and its number of hex digits (6 for MA-L, 7 for MA-M,
    /// 9 for MA-S and IAB), whether the row's name is wanted.
    func wants(_ assignment: UInt64, digits: Int) -> Bool
    mutating func found(_ assignment: UInt64, digits: Int, name: [UInt8])
}

/// A streaming reader of the IEEE registry's CSV files (`Registry,Assignment,Organization
/// Name,Organization Address`; RFC 4180 quoting, `""` for a quote inside quotes, which
/// may also hold commas and line breaks). Fed the file in chunks, it keeps no row: only
/// the assignment being read, and the organisation's name of a row its sink wants.
struct RegistryRows<Sink: RegistrySink> {
    /// Longer than any organisation's name in the registry; a longer one is cut.
    static var maximumNameBytes: Int { 256 }

    var sink: Sink

    private var field = 0
    private var inQuotes = false
    /// A `"` inside quotes: the next byte says whether it was `""` or the closing quote.
    private var quoteEnding = false
    private var assignment: UInt64 = 0
    private var digits = 0
    private var assignmentValid = true
    private var capturing = false
    private var name: [UInt8] = []

    init(sink: Sink) { self.sink = sink }

    mutating func consume(_ chunk: UnsafeRawBufferPointer) {
        for byte in chunk { consume(byte) }
    }

    /// The end of the file ends its last row.
    mutating func finish() {
        if field > 0 || digits > 0 || !name.isEmpty { endRow() }
        inQuotes = false
        quoteEnding = false
    }

    /// After a read error: the row cut short is dropped, not reported with half a name.
    mutating func abandon() {
        capturing = false
        endRow()
        inQuotes = false
        quoteEnding = false
    }

    private mutating func consume(_ byte: UInt8) {
        if inQuotes {
            if quoteEnding {
                quoteEnding = false
                if byte == UInt8(ascii: "\"") {
                    append(byte)
                    return
                }
                inQuotes = false
            } else {
                if byte == UInt8(ascii: "\"") {
                    quoteEnding = true
                } else {
                    append(byte)
                }
                return
            }
        }
        switch byte {
        case UInt8(ascii: "\""): inQuotes = true
        case UInt8(ascii: ","): endField()
        case UInt8(ascii: "\n"): endRow()
        case UInt8(ascii: "\r"): break
        default: append(byte)
        }
    }

    private mutating func append(_ byte: UInt8) {
        switch field {
        case 1:
            guard let nibble = byte.hexNibble else {
                if byte != UInt8(ascii: " ") { assignmentValid = false }
                return
            }
            digits += 1
            if digits <= 9 { assignment = assignment << 4 | UInt64(nibble) }
        case 2:
            if capturing, name.count < Self.maximumNameBytes { name.append(byte) }
        default: break
        }
    }

    private mutating func endField() {
        if field == 1 { capturing = assignmentValid && sink.wants(assignment, digits: digits) }
        field += 1
    }

    private mutating func endRow() {
        if field == 1 { endField() }
        if capturing { sink.found(assignment, digits: digits, name: name) }
        field = 0
        assignment = 0
        digits = 0
        assignmentValid = true
        capturing = false
        name.removeAll(keepingCapacity: true)
    }
}
