// Typed accessors: `nil` when the RDATA is of another type, so callers can write
// `if let address = record.rdata.ipv4`.

extension RData {
    public var ipv4: IPv4? {
        if case .a(let address) = self { address } else { nil }
    }

    public var ipv6: IPv6? {
        if case .aaaa(let address) = self { address } else { nil }
    }

    public var cnameTarget: DNSName? {
        if case .cname(let target) = self { target } else { nil }
    }

    public var dnameTarget: DNSName? {
        if case .dname(let target) = self { target } else { nil }
    }

    public var soa: SOA? {
        if case .soa(let soa) = self { soa } else { nil }
    }

    /// The SVCB or HTTPS rdata, whichever type this is.
    public var svcb: SVCB? {
        switch self {
        case .svcb(let value), .https(let value): value
        default: nil
        }
    }

    /// The <character-string>s of a TXT record (RFC 1035 §3.3.14), each a slice of the raw
    /// RDATA; a final string whose length byte overruns the RDATA is cut at the end.
    public var txtStrings: [ArraySlice<UInt8>]? {
        guard case .txt(let bytes) = self else { return nil }
        var strings: [ArraySlice<UInt8>] = []
        var index = 0
        while index < bytes.count {
            let end = min(bytes.count, index + 1 + Int(bytes[index]))
            strings.append(bytes[index + 1..<end])
            index = end
        }
        return strings
    }

    /// Builds TXT RDATA from strings, splitting any longer than 255 bytes.
    public static func txt(strings: [String]) -> RData {
        var bytes: [UInt8] = []
        for string in strings {
            var utf8 = Array(string.utf8)[...]
            repeat {
                let chunk = utf8.prefix(255)
                bytes.append(UInt8(chunk.count))
                bytes.append(contentsOf: chunk)
                utf8 = utf8.dropFirst(chunk.count)
            } while !utf8.isEmpty
        }
        return .txt(bytes)
    }

    /// Zone-file-like text for logs (raw types in the RFC 3597 `\# length hex` form).
    public var description: String {
        switch self {
        case .a(let address): address.description
        case .aaaa(let address): address.description
        case .ns(let name), .cname(let name), .ptr(let name), .dname(let name): name.description
        case .mx(let mx): "\(mx.preference) \(mx.exchange)"
        case .soa(let s): "\(s.mname) \(s.rname) \(s.serial) \(s.refresh) \(s.retry) \(s.expire) \(s.minimum)"
        case .srv(let s): "\(s.priority) \(s.weight) \(s.port) \(s.target)"
        case .svcb(let s), .https(let s): s.description
        case .txt(let bytes), .unknown(_, let bytes): Self.genericText(bytes)
        }
    }

    static func genericText(_ bytes: [UInt8]) -> String {
        var text = "\\# \(bytes.count)"
        if !bytes.isEmpty { text += " " }
        for byte in bytes {
            if byte < 16 { text += "0" }
            text += String(byte, radix: 16)
        }
        return text
    }
}
