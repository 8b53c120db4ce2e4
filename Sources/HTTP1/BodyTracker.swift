/// Reads a body as its bytes go by, without keeping any (RFC 9112 §6, §7.1): finds where
/// it ends, so the next message's first byte is known, and hands over its content — for
/// a chunked body the chunk data without the framing. A proxy forwards the bytes as they
/// are and only needs the end; a client or server collects the content. Incremental (feed
/// any split of the stream) and bounded: the chunk-size line, the trailer section and the
/// content each have a limit, so hostile framing is refused rather than followed forever.
/// The state is a few integers whatever the body's size. Pure.
///
/// Chunked framing is read strictly: 1–15 hex digits (no sign, no leading white space),
/// then extensions (after `;` or white space, not interpreted) and CRLF, or a bare LF where
/// `Limits.bareLineFeeds` allows it; chunk data must be followed by its line end; trailer
/// fields are passed over, not parsed.
public struct BodyTracker: Sendable, Equatable {
    public struct Limits: Sendable, Equatable {
        /// The longest chunk-size line, extensions and line end included.
        public var lineBytes: Int
        /// The longest trailer section, its empty line included.
        public var trailerBytes: Int
        /// The most content (after de-chunking) the body may have.
        public var contentBytes: Int64
        /// Whether a chunked body's lines may end in a bare LF (RFC 9112 §2.2 lets a
        /// recipient accept it). A proxy reading a request body does not: a server behind
        /// it that disagreed about where the body ends would read a second, smuggled request.
        public var bareLineFeeds: Bool

        public init(
            lineBytes: Int = 16_384, trailerBytes: Int = 16_384, contentBytes: Int64 = .max, bareLineFeeds: Bool = true
        ) {
            self.lineBytes = lineBytes
            self.trailerBytes = trailerBytes
            self.contentBytes = contentBytes
            self.bareLineFeeds = bareLineFeeds
        }
    }

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
        /// A CR inside a trailer line: its end, if an LF follows.
        case trailerLineCarriageReturn
        case trailerEnd
        case done
    }

    private(set) var state: State
    public let limits: Limits
    /// Bytes of the current chunk-size line, or of the trailer section, so far.
    private var lineBytes = 0
    /// Content handed over so far.
    public private(set) var contentBytes: Int64 = 0

    /// - Throws: `.bodyTooLarge` when a length above `limits.contentBytes` is announced.
    public init(_ framing: BodyFraming, limits: Limits) throws(HTTP1Error) {
        if case .length(let count) = framing, count > limits.contentBytes {
            throw .bodyTooLarge(limit: limits.contentBytes)
        }
        self.init(framing, lineLimits: limits)
    }

    /// A tracker without a content limit (what a proxy passing bodies on uses), with the
    /// default line limits; `bareLineFeeds` as `Limits.bareLineFeeds`.
    public init(_ framing: BodyFraming, bareLineFeeds: Bool = true) {
        self.init(framing, lineLimits: Limits(bareLineFeeds: bareLineFeeds))
    }

    private init(_ framing: BodyFraming, lineLimits: Limits) {
        limits = lineLimits
        switch framing {
        case .length(let count): state = count > 0 ? .length(remaining: count) : .done
        case .chunked: state = .size(value: 0, digits: 0)
        case .untilClose: state = .untilClose
        }
    }

    /// The whole body has gone by (never, for `untilClose`: its end is the peer's close).
    public var isComplete: Bool { state == .done }

    /// The body ends when the peer closes its connection.
    public var isUntilClose: Bool { state == .untilClose }

    /// Takes the bytes at the front of `bytes` that belong to the body and returns how
    /// many; fewer than offered means the body ended there.
    public mutating func consume(_ bytes: UnsafeRawBufferPointer) throws(HTTP1Error) -> Int {
        try consume(bytes) { _ in }
    }

    /// As `consume(_:)`, handing `content` the body's content as it goes by (for a chunked
    /// body the chunk data only), in order, in pieces of any size.
    /// - Throws: a chunked-framing error (`.badChunkSize`, `.chunkLineTooLong`,
    ///   `.chunkDataOverrun`, `.trailersTooLarge`, `.malformedTrailers`), or
    ///   `.bodyTooLarge` before content over the limit is handed over.
    public mutating func consume(
        _ bytes: UnsafeRawBufferPointer,
        content: (UnsafeRawBufferPointer) -> Void
    ) throws(HTTP1Error) -> Int {
        var index = 0
        while index < bytes.count {
            switch state {
            case .done:
                return index
            case .untilClose:
                try deliver(UnsafeRawBufferPointer(rebasing: bytes[index...]), content)
                return bytes.count
            case .length(let remaining):
                let take = Int(min(Int64(bytes.count - index), remaining))
                try deliver(UnsafeRawBufferPointer(rebasing: bytes[index..<index + take]), content)
                index += take
                state = remaining == Int64(take) ? .done : .length(remaining: remaining - Int64(take))
            case .data(let remaining):
                let take = Int(min(Int64(bytes.count - index), remaining))
                try deliver(UnsafeRawBufferPointer(rebasing: bytes[index..<index + take]), content)
                index += take
                state = remaining == Int64(take) ? .dataCarriageReturn : .data(remaining: remaining - Int64(take))
            default:
                try step(bytes[index])
                index += 1
            }
        }
        return index
    }

    private mutating func deliver(
        _ piece: UnsafeRawBufferPointer,
        _ content: (UnsafeRawBufferPointer) -> Void
    ) throws(HTTP1Error) {
        guard Int64(piece.count) <= limits.contentBytes - contentBytes else {
            throw .bodyTooLarge(limit: limits.contentBytes)
        }
        contentBytes += Int64(piece.count)
        if !piece.isEmpty { content(piece) }
    }

    /// One byte of the chunked framing outside chunk data.
    private mutating func step(_ byte: UInt8) throws(HTTP1Error) {
        switch state {
        case .size, .extensions, .sizeLineFeed:
            lineBytes += 1
            guard lineBytes <= limits.lineBytes else { throw .chunkLineTooLong(limit: limits.lineBytes) }
        case .trailerLineStart, .trailerLine, .trailerLineCarriageReturn, .trailerEnd:
            lineBytes += 1
            guard lineBytes <= limits.trailerBytes else { throw .trailersTooLarge(limit: limits.trailerBytes) }
        default:
            break
        }
        if byte == 0x0A, !limits.bareLineFeeds {
            switch state {
            case .sizeLineFeed, .dataLineFeed, .trailerEnd, .trailerLineCarriageReturn: break
            case .trailerLine: throw .bareLineFeedInChunkedBody
            case .size(_, let digits) where digits > 0: throw .bareLineFeedInChunkedBody
            case .extensions, .dataCarriageReturn, .trailerLineStart: throw .bareLineFeedInChunkedBody
            default: break
            }
        }
        switch state {
        case .size(let value, let digits):
            if let digit = Self.hexValue(byte) {
                guard digits < 15 else { throw .badChunkSize }
                state = .size(value: value << 4 | Int64(digit), digits: digits + 1)
            } else if digits > 0, byte == UInt8(ascii: ";") || byte == 0x20 || byte == 0x09 {
                state = .extensions(value: value)
            } else if digits > 0, byte == 0x0D {
                state = .sizeLineFeed(value: value)
            } else if digits > 0, byte == 0x0A {
                try endOfSizeLine(value)
            } else {
                throw .badChunkSize
            }
        case .extensions(let value):
            if byte == 0x0D { state = .sizeLineFeed(value: value) } else if byte == 0x0A { try endOfSizeLine(value) }
        case .sizeLineFeed(let value):
            guard byte == 0x0A else { throw .badChunkSize }
            try endOfSizeLine(value)
        case .dataCarriageReturn:
            if byte == 0x0D {
                state = .dataLineFeed
            } else if byte == 0x0A {
                state = .size(value: 0, digits: 0)
            } else {
                throw .chunkDataOverrun
            }
        case .dataLineFeed:
            guard byte == 0x0A else { throw .chunkDataOverrun }
            state = .size(value: 0, digits: 0)
        case .trailerLineStart:
            if byte == 0x0D { state = .trailerEnd } else if byte == 0x0A { state = .done } else { state = .trailerLine }
        case .trailerLine:
            if byte == 0x0A { state = .trailerLineStart } else if byte == 0x0D { state = .trailerLineCarriageReturn }
        case .trailerLineCarriageReturn:
            if byte == 0x0A { state = .trailerLineStart } else if byte != 0x0D { state = .trailerLine }
        case .trailerEnd:
            guard byte == 0x0A else { throw .malformedTrailers }
            state = .done
        case .length, .untilClose, .data, .done:
            break
        }
    }

    /// The chunk-size line has ended: the chunk's data, or the trailers after the last chunk.
    private mutating func endOfSizeLine(_ value: Int64) throws(HTTP1Error) {
        lineBytes = 0
        if value == 0 {
            state = .trailerLineStart
        } else {
            // Refused before the data arrives, as a length above the limit is.
            guard value <= limits.contentBytes - contentBytes else { throw .bodyTooLarge(limit: limits.contentBytes) }
            state = .data(remaining: value)
        }
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
