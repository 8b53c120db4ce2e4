// Writing names, with RFC 1035 §4.1.4 compression.
//
// For each suffix of the name, longest first, the table of names already written is
// searched for one equal to it, ignoring ASCII case (RFC 4343 §4.1: compression is
// case-insensitive, and the first spelling wins); on a hit the rest is a 2-byte pointer.
// Every label start written literally becomes a candidate for later names.

extension DNSWriter {
    /// Appends `name`. With `compress` (the default) it may end in a pointer to an earlier
    /// name, and its own suffixes become pointer targets. Without it the name is written
    /// whole and is not offered as a target: for RDATA whose names must not be compressed
    /// (SRV, DNAME, SVCB — RFC 2782, RFC 6672 §2.5, RFC 9460 §2.2), since an old decoder may
    /// not expect a pointer into such RDATA either.
    public mutating func writeName(_ name: DNSName, compress: Bool = true) {
        let wire = name.wire
        guard compress else {
            bytes.append(contentsOf: wire)
            return
        }
        var index = 0
        while wire[index] != 0 {
            if let target = compression.lookup(wire, from: index, in: bytes) {
                writeUInt16(0xC000 | UInt16(target))
                return
            }
            compression.remember(offset: bytes.count, length: wire.count - index)
            let length = Int(wire[index])
            bytes.append(contentsOf: wire[index...index + length])
            index += length + 1
        }
        bytes.append(0)
    }
}

extension CompressionTable {
    /// The offset of an earlier name equal (ignoring case) to `wire[from...]`, if any.
    func lookup(_ wire: [UInt8], from start: Int, in output: [UInt8]) -> Int? {
        let length = UInt32(wire.count - start)
        var index = 0
        while index < count {
            let entry = entries[index]
            index += 1
            guard entry & 0xFF == length else { continue }
            let offset = Int(entry >> 8)
            if Self.matches(wire, from: start, output, at: offset) { return offset }
        }
        return nil
    }

    /// Compares a name in the output (which may contain pointers) with `wire[from...]`.
    /// The output was written by this writer, but a caller may have `set` bytes over it, so
    /// the walk stays bounds-checked and hop-limited rather than trusting it.
    static func matches(_ wire: [UInt8], from start: Int, _ output: [UInt8], at offset: Int) -> Bool {
        var position = offset
        var index = start
        var hops = 0
        while true {
            guard position < output.count else { return false }
            var byte = output[position]
            while byte >= 0xC0 {
                hops += 1
                guard hops <= DNSReader.maxPointerHops, position + 1 < output.count else { return false }
                position = Int(byte & 0x3F) << 8 | Int(output[position + 1])
                guard position < output.count else { return false }
                byte = output[position]
            }
            guard byte == wire[index] else { return false }
            if byte == 0 { return true }
            let length = Int(byte)
            guard position + length < output.count else { return false }
            for step in 1...length where asciiLower(output[position + step]) != asciiLower(wire[index + step]) {
                return false
            }
            position += length + 1
            index += length + 1
        }
    }
}
