/// How a message body is delimited (RFC 9112 §6.3).
public enum BodyFraming: Equatable, Sendable {
    /// Exactly this many bytes (0: no body).
    case length(Int64)
    /// `Transfer-Encoding: chunked`: chunks, a last chunk and trailers (§7.1).
    case chunked
    /// A response without a length: the body ends when the origin closes.
    case untilClose

    /// The Content-Length of these field values: one decimal number, repeated identically
    /// if at all (`5, 5` is 5; `5, 6` is an error), at most 18 digits.
    static func contentLength(_ values: [String]) -> Int64? {
        var found: Int64?
        for member in values.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let digits = HTTPSyntax.trimmed(member)
            guard !digits.isEmpty, digits.utf8.count <= 18, digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                  let value = Int64(digits), found == nil || found == value else { return nil }
            found = value
        }
        return found
    }
}

/// Finds where a body ends in a stream of bytes without changing them: the proxy
/// forwards chunked bodies as they are and only needs to know where the next message
/// starts (or, for an HTTP/1.0 client, what the chunks carry). Keeps no bytes; state is
/// a few integers whatever the body's size. Pure.
public struct BodyTracker: Sendable, Equatable {
    enum State: Equatable {
        case length(remaining: Int64)
        case untilClose
        /// Chunked: reading a chunk-size line (value so far, digits seen).
        case size(value: Int64, digits: Int)
        case extensions(value: Int64)
        case sizeLineFeed(value: Int64)
        case data(remaining: Int64)
        case dataCarriageReturn
        case dataLineFeed
        case trailerLineStart
        case trailerLine
        case trailerEnd
        case done
    }

    private(set) var state: State

    public init(_ framing: BodyFraming) {
        switch framing {
        case .length(let count): state = count > 0 ? .length(remaining: count) : .done
        case .chunked: state = .size(value: 0, digits: 0)
        case .untilClose: state = .untilClose
        }
    }

    /// The whole body has gone by (never, for `untilClose`: the end is the origin's close).
    public var isComplete: Bool { state == .done }

    /// Consumes the bytes at the front of `bytes` that belong to the body and returns how
    /// many; fewer than offered means the body ended there.
    /// - Throws: `.malformedChunk` for a chunk-size line that is not 1–15 hex digits
    ///   optionally followed by extensions, or chunk data not followed by a line end.
    public mutating func consume(_ bytes: UnsafeRawBufferPointer) throws(ProxyError) -> Int {
        try consume(bytes) { _ in }
    }

    /// As `consume(_:)`, handing `content` the body's content as it goes by: for a chunked
    /// body the chunk data without its framing (for an HTTP/1.0 client, which cannot read
    /// chunked), otherwise the bytes themselves.
    public mutating func consume(_ bytes: UnsafeRawBufferPointer,
                                 content: (UnsafeRawBufferPointer) -> Void) throws(ProxyError) -> Int {
        var index = 0
        while index < bytes.count {
            switch state {
            case .done:
                return index
            case .untilClose:
                content(UnsafeRawBufferPointer(rebasing: bytes[index...]))
                return bytes.count
            case .length(let remaining):
                let take = Int(min(Int64(bytes.count - index), remaining))
                content(UnsafeRawBufferPointer(rebasing: bytes[index..<index + take]))
                index += take
                state = remaining - Int64(take) == 0 ? .done : .length(remaining: remaining - Int64(take))
            case .data(let remaining):
                let take = Int(min(Int64(bytes.count - index), remaining))
                content(UnsafeRawBufferPointer(rebasing: bytes[index..<index + take]))
                index += take
                state = remaining - Int64(take) == 0 ? .dataCarriageReturn : .data(remaining: remaining - Int64(take))
            default:
                try step(bytes[index])
                index += 1
            }
        }
        return index
    }

    /// One byte of the chunked framing outside chunk data.
    private mutating func step(_ byte: UInt8) throws(ProxyError) {
        switch state {
        case .size(let value, let digits):
            if let digit = Self.hexValue(byte) {
                guard digits < 15 else { throw .malformedChunk }
                state = .size(value: value << 4 | Int64(digit), digits: digits + 1)
            } else if digits > 0, byte == UInt8(ascii: ";") || byte == 0x20 || byte == 0x09 {
                state = .extensions(value: value)
            } else if digits > 0, byte == 0x0D {
                state = .sizeLineFeed(value: value)
            } else if digits > 0, byte == 0x0A {
                endOfSizeLine(value)
            } else {
                throw .malformedChunk
            }
        case .extensions(let value):
            if byte == 0x0D { state = .sizeLineFeed(value: value) }
            else if byte == 0x0A { endOfSizeLine(value) }
        case .sizeLineFeed(let value):
            guard byte == 0x0A else { throw .malformedChunk }
            endOfSizeLine(value)
        case .dataCarriageReturn:
            if byte == 0x0D { state = .dataLineFeed }
            else if byte == 0x0A { state = .size(value: 0, digits: 0) }
            else { throw .malformedChunk }
        case .dataLineFeed:
            guard byte == 0x0A else { throw .malformedChunk }
            state = .size(value: 0, digits: 0)
        case .trailerLineStart:
            if byte == 0x0D { state = .trailerEnd }
            else if byte == 0x0A { state = .done }
            else { state = .trailerLine }
        case .trailerLine:
            if byte == 0x0A { state = .trailerLineStart }
        case .trailerEnd:
            guard byte == 0x0A else { throw .malformedChunk }
            state = .done
        case .length, .untilClose, .data, .done:
            break
        }
    }

    private mutating func endOfSizeLine(_ value: Int64) {
        state = value == 0 ? .trailerLineStart : .data(remaining: value)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
