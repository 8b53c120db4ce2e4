/// What is wrong with an HTTP/1.1 message (RFC 9112): one case per malformation, so each
/// caller maps it to its own answer (the proxy: 400, or 431 for a head too large; the
/// client: a malformed response) and tests can name what they expect. Field lines are
/// numbered from 1 (the start line is line 0). No case carries a field's value, so a
/// secret in a header cannot reach a log through it.
public enum HTTP1Error: Error, Equatable, Sendable, CustomStringConvertible {
    // MARK: The head as a whole (RFC 9112 §2.2)

    /// The head did not end (with its empty line) within `limit` bytes.
    case headTooLarge(limit: Int)
    /// The start line alone did not end within `limit` bytes (for a request: the URI is
    /// too long, RFC 9110 §15.5.15).
    case startLineTooLong(limit: Int)
    /// The bytes end before the empty line that ends a head.
    case incompleteHead
    /// A CR not followed by LF inside a field line (§2.2: an invalid element).
    case bareCarriageReturn(line: Int)

    // MARK: Start lines (§3, §4)

    /// Not exactly `method SP request-target SP HTTP/1.d`, with a token for the method and
    /// visible ASCII for the target.
    case malformedRequestLine
    /// A well-formed HTTP-version other than 1.x (`HTTP/2.0`, `HTTP/0.9`): RFC 9110 §15.6.6.
    case unsupportedVersion(String)
    /// Not `HTTP/1.d SP 3DIGIT [SP reason-phrase]`: the line as received, control bytes as
    /// "?", at most 60 bytes (it tells a wrong port — `SSH-2.0-…` — at a glance).
    case malformedStatusLine(String)
    /// A status code below 100 (RFC 9110 §15).
    case statusOutOfRange(Int)

    // MARK: Field lines (§5)

    /// A line starting with white space: obsolete line folding (§5.2), refused rather
    /// than unfolded.
    case obsoleteLineFolding(line: Int)
    /// A field line without a colon.
    case missingColon(line: Int)
    /// White space between the field name and the colon (§5.1: must be rejected, 400).
    case whitespaceBeforeColon(line: Int)
    /// An empty field name, or one with a byte that is not a tchar (RFC 9110 §5.6.2).
    case invalidFieldName(line: Int)
    /// A control character (NUL, DEL, …; HTAB is allowed) in a field value (RFC 9110 §5.5).
    case invalidFieldValue(line: Int)

    // MARK: Framing (§6)

    /// Content-Length that is not one decimal number of at most 18 digits, or a list of
    /// numbers that disagree (`5, 6`; `5, 5` is 5), RFC 9110 §8.6.
    case badContentLength
    /// Transfer codings that cannot be framed: in a request, chunked not last (§6.3 rule 4);
    /// for a reader that undoes chunked only, anything else. The codings, lowercased.
    case unsupportedTransferCoding(String)
    /// A request with both Transfer-Encoding and Content-Length (§6.3 rule 3: a smuggling
    /// attempt, refused rather than guessed at).
    case transferEncodingWithContentLength

    // MARK: Bodies (§6, §7.1)

    /// The body is, or is announced to be, larger than the reader's limit.
    case bodyTooLarge(limit: Int64)
    /// A chunk-size line that does not start with 1–15 hexadecimal digits followed by
    /// extensions or the line end.
    case badChunkSize
    /// A chunk-size line (size and extensions) longer than `limit` bytes.
    case chunkLineTooLong(limit: Int)
    /// Chunk data not followed by its line end: the chunk was longer than its size.
    case chunkDataOverrun
    /// The trailer section after the last chunk is longer than `limit` bytes.
    case trailersTooLarge(limit: Int)
    /// A trailer line ending in a CR without LF.
    case malformedTrailers
    /// A chunk-size line, chunk end or trailer line ended by a bare LF where CRLF is
    /// required (a reader that must agree with every other parser about where a message
    /// ends: the proxy reading a request body).
    case bareLineFeedInChunkedBody

    public var description: String {
        switch self {
        case .headTooLarge(let limit): "header section over \(Self.size(limit))"
        case .startLineTooLong(let limit): "start line over \(Self.size(limit))"
        case .incompleteHead: "the head ends before its empty line"
        case .bareCarriageReturn(let line): "bare CR in header line \(line)"
        case .malformedRequestLine: "malformed request line"
        case .unsupportedVersion(let version): "HTTP version \(version) not supported"
        case .malformedStatusLine(let text): "bad status line \"\(text)\""
        case .statusOutOfRange(let code): "status code \(code) out of range"
        case .obsoleteLineFolding(let line): "folded header line \(line) (obsolete line folding)"
        case .missingColon(let line): "header line \(line) has no colon"
        case .whitespaceBeforeColon(let line): "white space before the colon in header line \(line)"
        case .invalidFieldName(let line): "header line \(line): the field name is not a token"
        case .invalidFieldValue(let line): "header line \(line): a control character in the value"
        case .badContentLength: "bad Content-Length"
        case .unsupportedTransferCoding(let codings): "unsupported Transfer-Encoding \(codings)"
        case .transferEncodingWithContentLength: "both Transfer-Encoding and Content-Length"
        case .bodyTooLarge(let limit): "body larger than \(limit) bytes"
        case .badChunkSize: "bad chunk size"
        case .chunkLineTooLong(let limit): "chunk-size line over \(Self.size(limit))"
        case .chunkDataOverrun: "chunk data longer than its size"
        case .trailersTooLarge(let limit): "trailer section over \(Self.size(limit))"
        case .malformedTrailers: "malformed trailer section"
        case .bareLineFeedInChunkedBody: "a chunked body's line ends in a bare LF"
        }
    }

    /// `65536` → `64 KiB`; other counts in bytes.
    private static func size(_ bytes: Int) -> String {
        bytes > 0 && bytes % 1024 == 0 ? "\(bytes / 1024) KiB" : "\(bytes) bytes"
    }
}
