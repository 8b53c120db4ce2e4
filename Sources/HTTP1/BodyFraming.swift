/// How a message body is delimited (RFC 9112 §6.3).
public enum BodyFraming: Equatable, Sendable {
    /// Exactly this many bytes (0: no body).
    case length(Int64)
    /// `Transfer-Encoding` with chunked last: chunks, a last chunk and trailers (§7.1).
    case chunked
    /// A response without a length: the body ends when the server closes (§6.3 rule 8).
    case untilClose
}

/// What a message's `Transfer-Encoding` lists, read without allocating.
public struct TransferCodings: Equatable, Sendable {
    /// How many codings are listed (0: no Transfer-Encoding, or only empty members).
    public let count: Int
    /// Whether the last one is `chunked`.
    public let lastIsChunked: Bool

    public init(count: Int, lastIsChunked: Bool) {
        self.count = count
        self.lastIsChunked = lastIsChunked
    }

    /// Exactly `chunked`: all a recipient that sent no `TE` accepts (RFC 9110 §10.1.4).
    public var isChunkedOnly: Bool { count == 1 && lastIsChunked }
}

extension HeaderFields {
    public var transferCodings: TransferCodings {
        var count = 0
        var lastIsChunked = false
        forEachMember(of: "transfer-encoding") { member in
            count += 1
            lastIsChunked = equalsIgnoringCase(member, "chunked")
            return true
        }
        return TransferCodings(count: count, lastIsChunked: lastIsChunked)
    }

    /// The Content-Length (RFC 9110 §8.6): nil when there is none; one decimal number of
    /// at most 18 digits, repeated identically if at all (`5, 5` is 5, across fields too).
    /// - Throws: `.badContentLength` for anything else (`5, 6`, `-1`, `+1`, `12x`, empty).
    public func contentLength() throws(HTTP1Error) -> Int64? {
        var found: Int64?
        for field in fields where isNamed(field, "content-length") {
            let wellFormed = forEachMember(of: field, includeEmpty: true) { member in
                guard let value = decimal(member), found == nil || found == value else { return false }
                found = value
                return true
            }
            guard wellFormed else { throw .badContentLength }
        }
        return found
    }

    /// The bytes in `range` as a decimal number of 1 to 18 digits (no sign), else nil.
    private func decimal(_ range: Range<Int>) -> Int64? {
        guard !range.isEmpty, range.count <= 18 else { return nil }
        var value: Int64 = 0
        for byte in bytes[range] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// The codings as listed, for an error message.
    var codingsText: String { tokens("transfer-encoding").joined(separator: ", ") }
}

extension RequestHead {
    /// How the request's body is delimited (RFC 9112 §6.3): chunked when Transfer-Encoding
    /// lists it last; else Content-Length; else no body.
    /// - Throws: `.transferEncodingWithContentLength` (rule 3: a smuggling attempt, refused
    ///   rather than guessed at), `.unsupportedTransferCoding` when chunked is not last
    ///   (rule 4: the length cannot be determined, 400), `.badContentLength`.
    public func bodyFraming() throws(HTTP1Error) -> BodyFraming {
        let codings = fields.transferCodings
        if codings.count > 0 {
            guard !fields.contains("content-length") else { throw .transferEncodingWithContentLength }
            guard codings.lastIsChunked else { throw .unsupportedTransferCoding(fields.codingsText) }
            return .chunked
        }
        return .length(try fields.contentLength() ?? 0)
    }
}

extension ResponseHead {
    /// How the body of this response to a `requestMethod` request is delimited (RFC 9112
    /// §6.3): none for HEAD, 1xx, 204 and 304 (rules 1–2); with Transfer-Encoding chunked
    /// when it is last, else until the server closes (rule 4); else Content-Length
    /// (rule 6); else until the server closes (rule 8). With both Transfer-Encoding and
    /// Content-Length the former wins (rule 3; see `hasConflictingFraming`).
    /// - Parameter chunkedOnly: the reader undoes no coding but chunked (a client that sent
    ///   no `TE`, RFC 9110 §10.1.4): any other listed coding is refused.
    /// - Throws: `.badContentLength`; with `chunkedOnly`, `.unsupportedTransferCoding`.
    public func bodyFraming(requestMethod: String, chunkedOnly: Bool = false) throws(HTTP1Error) -> BodyFraming {
        if requestMethod == "HEAD" || status < 200 || status == 204 || status == 304 { return .length(0) }
        let codings = fields.transferCodings
        if codings.count > 0 {
            if chunkedOnly, !codings.isChunkedOnly { throw .unsupportedTransferCoding(fields.codingsText) }
            return codings.lastIsChunked ? .chunked : .untilClose
        }
        guard let length = try fields.contentLength() else { return .untilClose }
        return .length(length)
    }

    /// Both Transfer-Encoding and Content-Length (§6.3 rule 3): read by the former, but the
    /// connection is not reused afterwards, and an intermediary drops Content-Length
    /// before forwarding.
    public var hasConflictingFraming: Bool {
        fields.transferCodings.count > 0 && fields.contains("content-length")
    }
}
