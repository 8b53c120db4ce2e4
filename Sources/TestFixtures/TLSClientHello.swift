/// Hand-made TLS ClientHello messages (RFC 8446 §4.1.2, RFC 6066 §3) for the proxy's SNI
/// check: with or without a server name, with or without an Encrypted Client Hello
/// extension (RFC 9849), in one record or fragmented over several.
public enum TLSClientHello {
    /// What an `encrypted_client_hello` extension (0xfe0d) carries.
    public enum ECH: Sendable {
        /// `ECHClientHello` of the outer kind: HPKE suite, config id, `enc` and a payload
        /// of random-looking bytes; a real ECH hello and a GREASE one look alike.
        case outer
        /// Of the inner kind (type 1): what only the encrypted ClientHelloInner carries.
        case inner
        /// No data at all, not even the kind: malformed.
        case empty
    }

    /// The handshake message (type 1, 24-bit length, body), not yet in a record. The ECH
    /// extension, when asked for, comes before the server name, as a shuffling client
    /// may send it.
    public static func handshake(serverName: String?, padding: Int = 0, ech: ECH? = nil) -> [UInt8] {
        var body: [UInt8] = [0x03, 0x03] + Array(repeating: 0x11, count: 32)  // legacy_version, random
        body += [32] + Array(repeating: 0x22, count: 32)  // legacy_session_id
        body += [0x00, 0x04, 0x13, 0x01, 0x13, 0x02]  // two cipher suites
        body += [0x01, 0x00]  // compression: null
        var extensions: [UInt8] = [0x00, 0x2B, 0x00, 0x03, 0x02, 0x03, 0x04]  // supported_versions: TLS 1.3
        switch ech {
        case .outer?:
            // HKDF-SHA256 / AES-128-GCM, config id 0x2A, a 32-byte enc, a 144-byte payload.
            let data: [UInt8] =
                [0x00, 0x00, 0x01, 0x00, 0x01, 0x2A] + u16(32) + Array(repeating: 0x5A, count: 32)
                + u16(144) + Array(repeating: 0xA5, count: 144)
            extensions += [0xFE, 0x0D] + u16(data.count) + data
        case .inner?:
            extensions += [0xFE, 0x0D, 0x00, 0x01, 0x01]
        case .empty?:
            extensions += [0xFE, 0x0D, 0x00, 0x00]
        case nil:
            break
        }
        if let serverName {
            let name = Array(serverName.utf8)
            let entry = [0x00] + u16(name.count) + name
            let list = u16(entry.count) + entry
            extensions += [0x00, 0x00] + u16(list.count) + list
        }
        if padding > 0 { extensions += [0x00, 0x15] + u16(padding) + Array(repeating: 0, count: padding) }
        body += u16(extensions.count) + extensions
        return [0x01, UInt8(body.count >> 16), UInt8((body.count >> 8) & 0xFF), UInt8(body.count & 0xFF)] + body
    }

    /// The ClientHello in one TLS record.
    public static func record(serverName: String?, padding: Int = 0, ech: ECH? = nil) -> [UInt8] {
        records(handshake(serverName: serverName, padding: padding, ech: ech), fragmentSize: .max)
    }

    /// `handshake` fragmented into handshake records of at most `fragmentSize` bytes each.
    public static func records(_ handshake: [UInt8], fragmentSize: Int) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        while offset < handshake.count {
            let end = min(handshake.count, offset + max(fragmentSize, 1))
            out += [0x16, 0x03, 0x01] + u16(end - offset) + handshake[offset..<end]
            offset = end
        }
        return out
    }

    private static func u16(_ value: Int) -> [UInt8] { [UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)] }
}
