// Log text for SVCB/HTTPS RDATA, close to the RFC 9460 §2.1 presentation form. Values the
// log reader cannot use (ech, unknown keys) are shown as a byte count, not dumped.

extension RData.SVCB: CustomStringConvertible {
    /// e.g. `1 . alpn=h2,h3 ipv4hint=192.0.2.1 ech=<75 bytes>`.
    public var description: String {
        var text = "\(priority) \(target.isRoot ? "." : target.presentation + ".")"
        for (key, value) in params {
            text += " \(key)"
            guard !value.isEmpty else { continue }
            text += "=" + Self.valueText(key, value)
        }
        return text
    }

    private static func valueText(_ key: SvcParamKey, _ value: ArraySlice<UInt8>) -> String {
        let bytes = Array(value)
        switch key {
        case .mandatory:
            return stride(from: 0, to: bytes.count - 1, by: 2)
                .map { SvcParamKey(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1])).description }
                .joined(separator: ",")
        case .alpn:
            var ids: [String] = []
            var index = 0
            while index < bytes.count {
                let end = min(bytes.count, index + 1 + Int(bytes[index]))
                ids.append(String(decoding: bytes[index + 1..<end], as: UTF8.self))
                index = end
            }
            return ids.joined(separator: ",")
        case .port where bytes.count == 2:
            return String(UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
        case .ipv4hint:
            return stride(from: 0, to: bytes.count - 3, by: 4)
                .map { RData.IPv4(bytes[$0], bytes[$0 + 1], bytes[$0 + 2], bytes[$0 + 3]).description }
                .joined(separator: ",")
        case .ipv6hint:
            return stride(from: 0, to: bytes.count - 15, by: 16).map { start in
                var high: UInt64 = 0
                var low: UInt64 = 0
                for index in 0..<8 { high = high << 8 | UInt64(bytes[start + index]) }
                for index in 8..<16 { low = low << 8 | UInt64(bytes[start + index]) }
                return RData.IPv6(high: high, low: low).description
            }.joined(separator: ",")
        case .dohpath:
            return String(decoding: bytes, as: UTF8.self)
        default:
            return "<\(bytes.count) bytes>"
        }
    }
}
