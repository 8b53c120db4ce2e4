/// Finds where a head ends in bytes that arrive piece by piece: just past the empty line
/// that ends it (CRLF CRLF, or bare LFs, which RFC 9112 §2.2 lets a recipient accept).
/// Each call resumes where the last one stopped (less three bytes, for a line end split
/// across reads), so no byte is searched twice; a head longer than `limit` is refused as
/// soon as that is certain. A few integers of state; pure.
public struct HeadScanner: Sendable, Equatable {
    /// The longest head accepted, empty line included.
    public let limit: Int
    /// Bytes from the head's start already searched.
    public private(set) var scanned = 0
    /// Where the start line ends (just past its LF), once it has.
    public private(set) var startLineEnd: Int?

    public init(limit: Int) {
        self.limit = limit
    }

    /// Searches `bytes`, which start at the head's first byte (the same start on every call
    /// until the head is found or `reset` is called, more bytes appended in between).
    /// - Returns: the head's length, empty line included; nil while it has not ended.
    /// - Throws: `.headTooLarge` when the head is longer than `limit`, or has not ended
    ///   within more than `limit` bytes; `.startLineTooLong` when its first line alone has
    ///   not ended within `limit` bytes.
    public mutating func scan(_ bytes: UnsafeRawBufferPointer) throws(HTTP1Error) -> Int? {
        var index = max(scanned - 3, 0)
        let count = bytes.count
        while index < count {
            guard bytes[index] == 0x0A else {
                index += 1
                continue
            }
            if startLineEnd == nil { startLineEnd = index + 1 }
            let next = index + 1
            var end: Int?
            if next < count, bytes[next] == 0x0A {
                end = next + 1
            } else if next + 1 < count, bytes[next] == 0x0D, bytes[next + 1] == 0x0A {
                end = next + 2
            }
            if let end {
                guard end <= limit else { throw tooLarge() }
                scanned = 0
                startLineEnd = nil
                return end
            }
            index = next
        }
        scanned = count
        if count > limit { throw tooLarge() }
        return nil
    }

    /// Over the limit: the start line alone, or the head.
    private func tooLarge() -> HTTP1Error {
        if let startLineEnd, startLineEnd <= limit { return .headTooLarge(limit: limit) }
        return .startLineTooLong(limit: limit)
    }

    /// Forgets the search, for a head starting somewhere else.
    public mutating func reset() {
        scanned = 0
        startLineEnd = nil
    }
}
