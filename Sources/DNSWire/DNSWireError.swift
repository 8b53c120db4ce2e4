/// The part of a message a parser was in when it met bad input (RFC 1035 §4.1).
public enum DNSSection: UInt8, Hashable, Sendable, Comparable, CustomStringConvertible {
    case header, question, answer, authority, additional

    public static func < (lhs: DNSSection, rhs: DNSSection) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .header: "header"
        case .question: "question"
        case .answer: "answer"
        case .authority: "authority"
        case .additional: "additional"
        }
    }
}

/// Why a SvcParams block (RFC 9460 §2.2) was rejected. Offsets are absolute in the
/// buffer being parsed: the message, or the rdata when an rdata is parsed alone.
public enum SVCBProblem: Hashable, Sendable {
    /// Fewer than four bytes left where a SvcParamKey and its length must start.
    case truncatedKey(offset: Int)
    /// A key not strictly greater than the one before it (RFC 9460 §2.2: "strictly increasing").
    case keyOrder(key: UInt16, offset: Int)
    /// A SvcParamValue whose length runs past the end of the rdata.
    case valuePastEnd(key: UInt16, offset: Int)
    /// A value whose shape is wrong for a key defined in RFC 9460 §7 (e.g. `port` not 2 bytes).
    case badValue(key: UInt16, offset: Int)
    /// A key listed in `mandatory` that the record does not carry (RFC 9460 §8).
    case mandatoryKeyMissing(key: UInt16)
}

/// Every way DNSWire rejects input. One enum for the module (docs/ARCHITECTURE.md#house-habits (6)): each case names
/// what was wrong, and its payload says where (a byte offset in the buffer being parsed).
///
/// Parsing never traps: every read is bounds-checked and ends in one of these.
public enum DNSWireError: Error, Hashable, Sendable, CustomStringConvertible {
    // MARK: Header layer (cheapest checks, before any name is read)

    /// Fewer than the 12 header bytes of RFC 1035 §4.1.1; such a packet is dropped.
    case shortHeader(length: Int)
    /// A section count that could not fit in the packet even if every entry were minimal
    /// (5 bytes a question, 11 bytes a record). Checked before anything is allocated.
    case countTooLarge(section: DNSSection, count: Int)
    /// `DNSQuery.parse` accepts exactly one question (docs/dns.md#hostile-input); this is the count seen.
    case questionCount(Int)

    // MARK: Framing

    /// The message ended inside `section` while reading the item that starts at `offset`.
    case truncated(section: DNSSection, offset: Int)
    /// Bytes left after the last record the header announced.
    case trailingBytes(offset: Int)
    /// RDATA whose length does not fit its type (A not 4 bytes, a name running past RDLENGTH…).
    case rdataLength(type: DNSType, offset: Int)

    // MARK: Names (RFC 1035 §3.1, §4.1.4)

    /// A label longer than 63 bytes (a length byte 0x40–0x7F on the wire).
    case labelTooLong(offset: Int)
    /// A name longer than 255 bytes in wire form; `offset` is where the name starts.
    case nameTooLong(offset: Int)
    /// A length byte with the reserved top bits `10` (RFC 6891 §5 leaves 0x80 unassigned).
    case badLabelType(offset: Int)
    /// A compression pointer to itself or into the name it belongs to.
    case pointerLoop(offset: Int)
    /// A compression pointer to a later offset, or to bytes that do not end before the
    /// pointer (only pointers to a prior name are accepted).
    case pointerForward(offset: Int)
    /// A compression pointer past the end of the message or into the 12-byte header.
    case pointerOutOfBounds(offset: Int)
    /// More pointer hops than a 255-byte name can legitimately need.
    case tooManyPointers(offset: Int)
    /// A compression pointer where the RFC forbids compression (SVCB TargetName, RFC 9460 §2.2).
    case compressedName(offset: Int)
    /// Text form only: an empty label (`a..b`); `offset` is a UTF-8 offset in the text.
    case emptyLabel(offset: Int)
    /// Text form only: a `\` not followed by a character or by three digits 000–255.
    case badEscape(offset: Int)

    // MARK: EDNS (RFC 6891)

    /// A second OPT record; `offset` is where it starts (RFC 6891 §6.1.1: FORMERR).
    case multipleOPT(offset: Int)
    /// An OPT record whose owner name is not the root (RFC 6891 §6.1.2).
    case optNotRoot(offset: Int)
    /// An OPT record outside the additional section.
    case optOutsideAdditional(section: DNSSection)
    /// An EDNS option whose length runs past the end of the OPT rdata.
    case badEDNSOption(offset: Int)
    /// An Extended DNS Error option shorter than its 2-byte INFO-CODE (RFC 8914 §2).
    case badExtendedError(length: Int)

    // MARK: SVCB / HTTPS (RFC 9460)

    case badSvcParams(reason: SVCBProblem)

    public var description: String {
        switch self {
        case .shortHeader(let length): "packet of \(length) bytes is shorter than a DNS header"
        case .countTooLarge(let section, let count): "\(section) count \(count) cannot fit in the packet"
        case .questionCount(let count): "expected exactly one question, got \(count)"
        case .truncated(let section, let offset): "message ends inside the \(section) section at byte \(offset)"
        case .trailingBytes(let offset): "unexpected bytes after the last record at byte \(offset)"
        case .rdataLength(let type, let offset): "\(type) rdata at byte \(offset) has the wrong length"
        case .labelTooLong(let offset): "label longer than 63 bytes at byte \(offset)"
        case .nameTooLong(let offset): "name longer than 255 bytes at byte \(offset)"
        case .badLabelType(let offset): "unknown label type at byte \(offset)"
        case .pointerLoop(let offset): "compression pointer loop at byte \(offset)"
        case .pointerForward(let offset): "forward compression pointer at byte \(offset)"
        case .pointerOutOfBounds(let offset): "compression pointer out of bounds at byte \(offset)"
        case .tooManyPointers(let offset): "too many compression pointers at byte \(offset)"
        case .compressedName(let offset): "compressed name where compression is not allowed at byte \(offset)"
        case .emptyLabel(let offset): "empty label at character \(offset)"
        case .badEscape(let offset): "bad escape at character \(offset)"
        case .multipleOPT(let offset): "second OPT record at byte \(offset)"
        case .optNotRoot(let offset): "OPT record at byte \(offset) has a non-root owner"
        case .optOutsideAdditional(let section): "OPT record in the \(section) section"
        case .badEDNSOption(let offset): "EDNS option at byte \(offset) runs past the OPT rdata"
        case .badExtendedError(let length): "Extended DNS Error option of \(length) bytes is too short"
        case .badSvcParams(let reason): "bad SvcParams: \(reason)"
        }
    }
}
