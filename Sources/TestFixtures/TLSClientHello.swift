/// Hand-made TLS ClientHello messages (RFC 8446 §4.1.2, RFC 6066 §3) for the proxy's SNI
/// check: with or without a server name, in one record or fragmented over several.
public enum TLSClientHello {
    /// The handshake message (type 1, 24-bit length, body), not yet in a record.
    public static func handshake(serverName: String?, padding: Int = 0) -> [UInt8] {
        var body: [UInt8] = [0x03, 0x03] + Array(repeating: 0x11, count: 32)  // legacy_version, random
        body += [32] + Array(repeating: 0x22, count: 32)  // legacy_session_id
        body += [0x00, 0x04, 0x13, 0x01, 0x13, 0x02]  // two cipher suites
        body += [0x01, 0x00]  // compression: null
        var extensions: [UInt8] = [0x00, 0x2B, 0x00, 0x03, 0x02, 0x03, 0x04]  // supported_versions: TLS 1.3
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
    public static func record(serverName: String?, padding: Int = 0) -> [UInt8] {
        records(handshake(serverName: serverName, padding: padding), fragmentSize: .max)
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
