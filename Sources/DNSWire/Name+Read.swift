// Reading names with compression pointers (RFC 1035 §4.1.4), hostile input first in mind.
//
// A name is measured and validated in one pass that allocates nothing, then copied in a
// second pass into an array of exactly the right size. The rules, cheapest first:
// - a length byte 0x40–0x7F is a label over 63 bytes; 0x80–0xBF is an unknown label type;
// - the uncompressed name may not exceed 255 bytes, counted as it is walked, so a long
//   chain of pointers cannot make the walk longer than the name;
// - a pointer must point strictly before the start of the stretch of labels it ends (the
//   name's own start, or the previous pointer's target), and not into the header. Real
//   compressors always satisfy this, because they point at names already written, and it
//   makes every walk terminate: targets strictly decrease;
// - what a pointer leads to must lie wholly before the pointer (a prior name, RFC 1035
//   §4.1.4), not run on past it into later bytes: a cut at a record boundary
//   (truncation) then keeps every name of the records it keeps;
// - at most `maxPointerHops` pointers per name, which bounds the work of pointer-only chains.

extension DNSReader {
    /// A 255-byte name has at most 127 labels, so no legitimate name needs more hops.
    static let maxPointerHops = 127

    /// Reads the (possibly compressed) name at `readerIndex` and moves past it.
    /// Allocates one array of the name's length, except for the root, which is shared.
    public mutating func readName() throws(DNSWireError) -> DNSName {
        let start = readerIndex
        let (length, end) = try measureName(at: start)
        readerIndex = end
        if length == 1 { return .root }
        let wire = [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
            // The name was validated above, so this walk trusts the bytes.
            var position = start
            var out = 0
            while true {
                let byte = bytes[position]
                if byte >= 0xC0 {
                    position = Int(byte & 0x3F) << 8 | Int(bytes[position + 1])
                    continue
                }
                buffer[out] = byte
                out += 1
                if byte == 0 { break }
                for index in position + 1...position + Int(byte) {
                    buffer[out] = bytes[index]
                    out += 1
                }
                position += Int(byte) + 1
            }
            initialized = out
        }
        return DNSName(trustedWire: wire)
    }

    /// `readName`, into `storage` (kept by the caller and handed in again, so that once the
    /// previous name read into it is gone nothing is allocated); the name shares it.
    public mutating func readName(into storage: inout [UInt8]) throws(DNSWireError) -> DNSName {
        let start = readerIndex
        let (length, end) = try measureName(at: start)
        readerIndex = end
        storage.removeAll(keepingCapacity: true)
        // Validated above, so this walk trusts the bytes.
        var position = start
        while true {
            let byte = bytes[position]
            if byte >= 0xC0 {
                position = Int(byte & 0x3F) << 8 | Int(bytes[position + 1])
                continue
            }
            storage.append(byte)
            if byte == 0 { break }
            for index in position + 1..<position + Int(byte) + 1 { storage.append(bytes[index]) }
            position += Int(byte) + 1
        }
        assert(storage.count == length, "a name measured and copied differently")
        return DNSName(trustedWire: storage)
    }

    /// Validates the name at `readerIndex` and moves past it without allocating.
    public mutating func skipName() throws(DNSWireError) {
        readerIndex = try measureName(at: readerIndex).end
    }

    /// Validates a name that must not be compressed (SVCB TargetName, RFC 9460 §2.2) and
    /// moves past it; a pointer is `.compressedName`.
    mutating func readNameUncompressed() throws(DNSWireError) {
        let start = readerIndex
        var length = 0
        while true {
            guard let byte = getUInt8(at: readerIndex) else { throw truncated(at: readerIndex) }
            switch byte {
            case 0:
                readerIndex += 1
                return
            case 1...63:
                length += Int(byte) + 1
                guard length < 255 else { throw .nameTooLong(offset: start) }
                try skipBytes(Int(byte) + 1)
            case 0x40...0x7F: throw .labelTooLong(offset: readerIndex)
            case 0xC0...0xFF: throw .compressedName(offset: readerIndex)
            default: throw .badLabelType(offset: readerIndex)
            }
        }
    }

    /// Reading on past `bound` at `at`: a cut message, or a pointer whose name runs on
    /// past the pointer.
    private func overrun(_ at: Int, pointer: Int) -> DNSWireError {
        pointer < 0 ? truncated(at: at) : .pointerForward(offset: pointer)
    }

    /// Walks the name at `start` applying every rule above, without allocating.
    /// Returns its uncompressed wire length and the offset just past it in the message.
    func measureName(at start: Int) throws(DNSWireError) -> (length: Int, end: Int) {
        var position = start
        var segmentStart = start
        var length = 0
        var end = -1
        var hops = 0
        // Reads stay below `bound`: the limit, then the last pointer followed.
        var bound = limit
        var pointer = -1
        while true {
            guard position < bound else { throw overrun(position, pointer: pointer) }
            let byte = bytes[position]
            switch byte & 0xC0 {
            case 0x00:
                let labelLength = Int(byte)
                if labelLength == 0 {
                    return (length + 1, end < 0 ? position + 1 : end)
                }
                length += labelLength + 1
                // +1 for the root label still to come.
                guard length + 1 <= 255 else { throw .nameTooLong(offset: start) }
                guard labelLength < bound - position else { throw overrun(position, pointer: pointer) }
                position += labelLength + 1
            case 0xC0:
                guard position + 1 < bound else { throw overrun(position, pointer: pointer) }
                let target = Int(byte & 0x3F) << 8 | Int(bytes[position + 1])
                if end < 0 { end = position + 2 }
                if target >= bytes.count || target < DNSHeader.byteCount {
                    throw .pointerOutOfBounds(offset: position)
                }
                if target > position { throw .pointerForward(offset: position) }
                if target >= segmentStart { throw .pointerLoop(offset: position) }
                hops += 1
                guard hops <= Self.maxPointerHops else { throw .tooManyPointers(offset: position) }
                segmentStart = target
                pointer = position
                bound = position
                position = target
            case 0x40:
                throw .labelTooLong(offset: position)
            default:
                throw .badLabelType(offset: position)
            }
        }
    }
}
