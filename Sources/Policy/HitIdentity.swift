import DomainMatch

/// What tells one hit's event apart from another (docs/sync.md#hits), as bytes: profile,
/// name and reason text, each with a two-byte length, then the client (a tag: 0 for none,
/// 4 or 6, and the address's bytes) and the source (1 DNS, 2 proxy, 3 transparent, 4 firewall). The
/// recorder writes it for every hit, to look its events up without making their strings;
/// the flush reads it back. Both directions live here so they cannot disagree.
public enum HitIdentity {
    public typealias Fields = (
        profile: String, name: String, reasonText: String, client: IPAddress?, source: HitSource
    )

    /// Appends `hit`'s identity to `bytes`; `folded`: with the name `*.RULE` (`*` for a
    /// hit without a rule) in place of the name asked (docs/sync.md#bounds).
    public static func append(_ hit: Hit, folded: Bool = false, to bytes: inout [UInt8]) {
        field(&bytes) { bytes in
            var profile = hit.profile
            profile.withUTF8 { bytes.append(contentsOf: $0) }
        }
        field(&bytes) { bytes in
            if folded {
                bytes.append(UInt8(ascii: "*"))
                bytes.append(UInt8(ascii: "."))
                if !hit.appendRule(to: &bytes) { bytes.removeLast() }
                return
            }
            switch hit.asked {
            case .text(var text): text.withUTF8 { bytes.append(contentsOf: $0) }
            case .domain(let name): name.bytes.withUnsafeBufferPointer { bytes.append(contentsOf: $0) }
            }
        }
        field(&bytes) { hit.decision.appendReasonText(to: &$0) }
        switch hit.client {
        case .v4(let bits)?:
            bytes.append(4)
            append(UInt64(bits), bytes: 4, to: &bytes)
        case .v6(let high, let low)?:
            bytes.append(6)
            append(high, bytes: 8, to: &bytes)
            append(low, bytes: 8, to: &bytes)
        case nil: bytes.append(0)
        }
        switch hit.source {
        case .dns: bytes.append(1)
        case .proxy: bytes.append(2)
        case .transparent: bytes.append(3)
        case .firewall: bytes.append(4)
        }
    }

    /// The fields an identity holds, read back.
    public static func decode(_ bytes: [UInt8]) -> Fields {
        let (profile, name, reasonText, end) = bytes.withUnsafeBytes { bytes in
            let texts = texts(bytes)
            return (
                // A name from the wire may hold any byte: as text it is its presentation form.
                String(decoding: texts.profile, as: UTF8.self), DomainName.presentation(of: texts.name),
                String(decoding: texts.reason, as: UTF8.self), texts.end
            )
        }
        var position = end
        func word(_ count: Int) -> UInt64 {
            var value: UInt64 = 0
            for _ in 0..<count where position < bytes.count {
                value = value << 8 | UInt64(bytes[position])
                position += 1
            }
            return value
        }
        let tag = position < bytes.count ? bytes[position] : 0
        position += 1
        let client: IPAddress?
        switch tag {
        case 4: client = .v4(UInt32(truncatingIfNeeded: word(4)))
        case 6: client = .v6(high: word(8), low: word(8))
        default: client = nil
        }
        switch position < bytes.count ? bytes[position] : 1 {
        case 2: return (profile, name, reasonText, client, .proxy)
        case 3: return (profile, name, reasonText, client, .transparent)
        case 4: return (profile, name, reasonText, client, .firewall)
        default: return (profile, name, reasonText, client, .dns)
        }
    }

    /// The three length-prefixed texts an identity starts with (profile, name, reason
    /// text), as slices of `bytes`, and where what follows them starts. A length past the
    /// end is cut at the end.
    public static func texts(
        _ bytes: UnsafeRawBufferPointer
    ) -> (profile: UnsafeRawBufferPointer, name: UnsafeRawBufferPointer, reason: UnsafeRawBufferPointer, end: Int) {
        var position = 0
        func text() -> UnsafeRawBufferPointer {
            guard position + 2 <= bytes.count else { return UnsafeRawBufferPointer(start: nil, count: 0) }
            let length = min(Int(bytes[position]) << 8 | Int(bytes[position + 1]), bytes.count - position - 2)
            defer { position += 2 + length }
            return UnsafeRawBufferPointer(rebasing: bytes[(position + 2)..<(position + 2 + length)])
        }
        let profile = text()
        let name = text()
        let reason = text()
        return (profile, name, reason, position)
    }

    /// A field: two bytes of length, then what `write` appends.
    private static func field(_ bytes: inout [UInt8], _ write: (inout [UInt8]) -> Void) {
        let start = bytes.count
        bytes.append(0)
        bytes.append(0)
        write(&bytes)
        let length = bytes.count - start - 2
        bytes[start] = UInt8(truncatingIfNeeded: length >> 8)
        bytes[start + 1] = UInt8(truncatingIfNeeded: length)
    }

    /// The low `count` bytes of `value`, most significant first.
    private static func append(_ value: UInt64, bytes count: Int, to bytes: inout [UInt8]) {
        var shift = UInt64(count * 8)
        while shift > 0 {
            shift -= 8
            bytes.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }
}
