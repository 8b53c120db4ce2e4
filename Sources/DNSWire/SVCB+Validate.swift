// SvcParams validation (RFC 9460 §2.2, §7, §8). A client MUST reject an RRset with a
// malformed record, so the proxy must not forward one it cannot vouch for, and the ECH
// surgery relies on every length being right.

extension RData.SVCB {
    /// Checks the SvcParams in `bytes[range]`. Offsets in errors are indices into `bytes`.
    static func validateParams(_ bytes: [UInt8], _ range: Range<Int>) throws(DNSWireError) {
        var index = range.lowerBound
        var previous = -1
        var mandatory: Range<Int>?
        while index < range.upperBound {
            guard range.upperBound - index >= 4 else { throw .badSvcParams(reason: .truncatedKey(offset: index)) }
            let key = UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard Int(key) > previous else { throw .badSvcParams(reason: .keyOrder(key: key, offset: index)) }
            guard length <= range.upperBound - index - 4 else {
                throw .badSvcParams(reason: .valuePastEnd(key: key, offset: index))
            }
            let value = index + 4..<index + 4 + length
            guard valueIsWellFormed(SvcParamKey(key), bytes, value) else {
                throw .badSvcParams(reason: .badValue(key: key, offset: index))
            }
            if key == SvcParamKey.mandatory.rawValue { mandatory = value }
            previous = Int(key)
            index = value.upperBound
        }
        if let mandatory {
            for position in stride(from: mandatory.lowerBound, to: mandatory.upperBound, by: 2) {
                let listed = UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1])
                guard containsKey(listed, bytes, range) else {
                    throw .badSvcParams(reason: .mandatoryKeyMissing(key: listed))
                }
            }
        }
    }

    /// Shape checks for the keys RFC 9460 §7 and its companions define; others pass.
    private static func valueIsWellFormed(_ key: SvcParamKey, _ bytes: [UInt8], _ value: Range<Int>) -> Bool {
        switch key {
        case .mandatory:
            // §8: a non-empty list of keys, strictly increasing, never naming itself.
            guard !value.isEmpty, value.count % 2 == 0 else { return false }
            var previous = 0
            for position in stride(from: value.lowerBound, to: value.upperBound, by: 2) {
                let listed = Int(bytes[position]) << 8 | Int(bytes[position + 1])
                guard listed > previous else { return false }
                previous = listed
            }
            return true
        case .alpn:
            // §7.1.1: one or more non-empty length-prefixed alpn-ids filling the value.
            guard !value.isEmpty else { return false }
            var position = value.lowerBound
            while position < value.upperBound {
                let length = Int(bytes[position])
                guard length > 0, length < value.upperBound - position else { return false }
                position += 1 + length
            }
            return true
        case .noDefaultALPN, .ohttp: return value.isEmpty
        case .port: return value.count == 2
        case .ipv4hint: return !value.isEmpty && value.count % 4 == 0
        case .ipv6hint: return !value.isEmpty && value.count % 16 == 0
        default: return true
        }
    }

    private static func containsKey(_ key: UInt16, _ bytes: [UInt8], _ range: Range<Int>) -> Bool {
        var index = range.lowerBound
        while index + 4 <= range.upperBound {
            if UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]) == key { return true }
            index += 4 + (Int(bytes[index + 2]) << 8 | Int(bytes[index + 3]))
        }
        return false
    }
}
