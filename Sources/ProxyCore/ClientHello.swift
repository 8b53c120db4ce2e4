/// What the first bytes of a tunnel say about the TLS server name.
public enum ClientHelloScan: Equatable, Sendable {
    /// Could be a ClientHello that has not all arrived yet.
    case needMore
    /// A complete ClientHello naming this host (RFC 6066 §3 `host_name`, as sent), and
    /// whether it offers Encrypted Client Hello: an `encrypted_client_hello` extension of
    /// the outer kind (RFC 9849, `ECHClientHello`), which a real ECH hello and a GREASE one both carry.
    case serverName(String, offersECH: Bool)
    /// A complete ClientHello without a server name.
    case noServerName
    /// Not a TLS handshake (another protocol in the tunnel).
    case notTLS
    /// TLS records that do not hold a well-formed ClientHello.
    case malformed
}

/// Finds the SNI in a client's first bytes for the SNI check (docs/proxy.md#the-sni-check), before a
/// single byte reaches the origin. The ClientHello may be split across TCP segments and
/// across TLS records (RFC 8446 §5.1: handshake messages may be fragmented), so records
/// are reassembled first; every length is checked against what is there, so truncated
/// or hostile input gives `.needMore`, `.notTLS` or `.malformed` and never traps. Pure.
public enum ClientHello {
    static let handshakeRecord: UInt8 = 22
    static let clientHelloType: UInt8 = 1
    static let serverNameExtension: UInt16 = 0
    /// RFC 9849: `encrypted_client_hello`; its first byte says outer (0) or inner (1).
    static let echExtension: UInt16 = 0xFE0D
    static let echOuter: UInt8 = 0
    /// RFC 8446 §5.1: a record's fragment is at most 2^14 bytes (plus room some stacks use).
    static let maxRecord = 16_384 + 2048

    public static func scan(_ bytes: UnsafeRawBufferPointer) -> ClientHelloScan {
        guard let first = bytes.first else { return .needMore }
        guard first == handshakeRecord else { return .notTLS }
        // 1. Records → the handshake bytes they carry (the last one possibly partial).
        var handshake: [UInt8] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes[offset] == handshakeRecord else { return offset == 0 ? .notTLS : .malformed }
            if bytes.count - offset >= 2, bytes[offset + 1] != 3 { return offset == 0 ? .notTLS : .malformed }
            guard bytes.count - offset >= 5 else { break }
            let length = Int(bytes[offset + 3]) << 8 | Int(bytes[offset + 4])
            guard length > 0, length <= maxRecord else { return .malformed }
            let available = min(length, bytes.count - offset - 5)
            handshake.append(contentsOf: bytes[(offset + 5)..<(offset + 5 + available)])
            offset += 5 + length
            // 2. Enough for the ClientHello? Then bytes after it do not matter.
            if handshake.count >= 4 {
                guard handshake[0] == clientHelloType else { return .malformed }
                let bodyLength = Int(handshake[1]) << 16 | Int(handshake[2]) << 8 | Int(handshake[3])
                if handshake.count >= 4 + bodyLength { return parseBody(handshake[4..<(4 + bodyLength)]) }
            }
        }
        return .needMore
    }

    /// The ClientHello body (RFC 8446 §4.1.2): version, random, session id, cipher
    /// suites, compression methods, then the extensions, where server_name is looked up.
    static func parseBody(_ body: ArraySlice<UInt8>) -> ClientHelloScan {
        var reader = Reader(bytes: body)
        guard reader.skip(2 + 32), let sessionLength = reader.uint8(), reader.skip(Int(sessionLength)),
            let suitesLength = reader.uint16(), reader.skip(Int(suitesLength)),
            let compressionLength = reader.uint8(), reader.skip(Int(compressionLength))
        else { return .malformed }
        guard !reader.isAtEnd else { return .noServerName }  // no extensions at all
        guard let extensionsLength = reader.uint16(), var extensions = reader.sub(Int(extensionsLength)) else {
            return .malformed
        }
        // Every extension is read, not only up to the server name: the ECH extension may
        // come anywhere (Chromium shuffles their order), and a list that does not parse to
        // its end is not trusted for the name either.
        var serverName: String?
        var sawServerName = false
        var offersECH = false
        while !extensions.isAtEnd {
            guard let type = extensions.uint16(), let length = extensions.uint16(),
                var data = extensions.sub(Int(length))
            else { return .malformed }
            if type == echExtension {
                guard let kind = data.uint8() else { return .malformed }
                if kind == echOuter { offersECH = true }
                continue
            }
            // RFC 8446 §4.2: an extension appears once; the first server_name decides.
            guard type == serverNameExtension, !sawServerName else { continue }
            sawServerName = true
            // ServerNameList: a 2-byte length, then (name_type, 2-byte length, name) entries.
            guard let listLength = data.uint16(), var list = data.sub(Int(listLength)) else { return .malformed }
            while !list.isAtEnd, serverName == nil {
                guard let nameType = list.uint8(), let nameLength = list.uint16(),
                    let name = list.bytes(Int(nameLength))
                else { return .malformed }
                if nameType == 0 {
                    guard !name.isEmpty else { return .malformed }
                    serverName = String(decoding: name, as: UTF8.self)
                }
            }
        }
        guard let serverName else { return .noServerName }
        return .serverName(serverName, offersECH: offersECH)
    }

    /// Bounds-checked big-endian reads over a slice.
    struct Reader {
        var bytes: ArraySlice<UInt8>

        var isAtEnd: Bool { bytes.isEmpty }

        mutating func skip(_ count: Int) -> Bool { bytes(count) != nil }

        mutating func bytes(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, bytes.count >= count else { return nil }
            defer { bytes = bytes.dropFirst(count) }
            return bytes.prefix(count)
        }

        mutating func sub(_ count: Int) -> Reader? { bytes(count).map { Reader(bytes: $0) } }

        mutating func uint8() -> UInt8? { bytes(1)?.first }

        mutating func uint16() -> UInt16? {
            guard let pair = bytes(2) else { return nil }
            return UInt16(pair[pair.startIndex]) << 8 | UInt16(pair[pair.startIndex + 1])
        }
    }
}
