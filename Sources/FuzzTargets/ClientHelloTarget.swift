import ProxyCore

/// The SNI check's reader (`ClientHello.scan`) on a tunnel's first bytes, which arrive in
/// TCP segments of any size and may fragment the ClientHello over several TLS records.
enum ClientHelloTarget {
    static let target = FuzzTarget(
        "client-hello",
        "no prefix of the input contradicts the verdict on all of it (only needMore or the same verdict); a "
            + "server name is one the ClientHello carries; the same ClientHello in other records reads the same"
    ) { input throws(PropertyViolation) in
        let verdict = scan(input[...])
        try prefixesAgree(input, verdict)
        guard verdict == .noServerName || isServerName(verdict) else { return }
        let handshake = handshakeBytes(input)
        if case .serverName(let name, _) = verdict {
            try check(!name.isEmpty && carries(handshake, name), "server name \(name) is not in the ClientHello")
        }
        // The verdict rests on the ClientHello alone, however it was cut into records.
        for size in [1, 7, 300, 16_384] {
            let again = scan(records(handshake, fragmentSize: size)[...])
            try check(again == verdict, "in records of \(size) bytes: \(again), not \(verdict)")
        }
    }

    static func scan(_ bytes: ArraySlice<UInt8>) -> ClientHelloScan {
        bytes.withUnsafeBytes { ClientHello.scan($0) }
    }

    static func isServerName(_ verdict: ClientHelloScan) -> Bool {
        if case .serverName = verdict { return true }
        return false
    }

    /// Once a prefix gives a verdict other than needMore, every longer prefix gives it too.
    static func prefixesAgree(_ input: [UInt8], _ verdict: ClientHelloScan) throws(PropertyViolation) {
        let step = max(1, input.count / 256)
        var length = 0
        while length < input.count {
            let partial = scan(input[..<length])
            try check(
                partial == .needMore || partial == verdict, "the first \(length) bytes give \(partial), all \(verdict)")
            length += step
        }
    }

    /// The handshake message the records carry, up to the ClientHello's stated end
    /// (a plain reassembly: record headers dropped, payloads joined).
    static func handshakeBytes(_ input: [UInt8]) -> [UInt8] {
        var payload: [UInt8] = []
        var offset = 0
        while offset + 5 <= input.count {
            let length = Int(input[offset + 3]) << 8 | Int(input[offset + 4])
            payload += input[(offset + 5)..<min(input.count, offset + 5 + length)]
            offset += 5 + length
        }
        guard payload.count >= 4 else { return payload }
        let end = 4 + (Int(payload[1]) << 16 | Int(payload[2]) << 8 | Int(payload[3]))
        return Array(payload.prefix(end))
    }

    /// Whether a `host_name` entry (type 0, 2-byte length, bytes) spelling `name` is in `bytes`.
    static func carries(_ bytes: [UInt8], _ name: String) -> Bool {
        var index = 0
        while index + 3 <= bytes.count {
            let length = Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            if bytes[index] == 0, index + 3 + length <= bytes.count,
                String(decoding: bytes[(index + 3)..<(index + 3 + length)], as: UTF8.self) == name
            {
                return true
            }
            index += 1
        }
        return false
    }

    static func records(_ handshake: [UInt8], fragmentSize: Int) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        while offset < handshake.count {
            let end = min(handshake.count, offset + fragmentSize)
            out += [0x16, 0x03, 0x01, UInt8((end - offset) >> 8), UInt8((end - offset) & 0xFF)]
            out += handshake[offset..<end]
            offset = end
        }
        return out
    }
}
