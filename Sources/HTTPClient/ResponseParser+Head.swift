/// The status line, header fields and the framing decision (RFC 9112 §4, §5, §6.3).
extension ResponseParser {
    /// `HTTP/1.x SP 3DIGIT [SP reason]`.
    mutating func parseStatusLine(_ line: [UInt8]) throws(HTTPError) {
        let prefix = Array("HTTP/1.".utf8)
        guard line.count >= 12, Array(line[0..<7]) == prefix, line[8] == UInt8(ascii: " "),
              let minor = digit(line[7]), minor <= 1,
              let hundreds = digit(line[9]), let tens = digit(line[10]), let ones = digit(line[11]),
              line.count == 12 || line[12] == UInt8(ascii: " ")
        else { throw .malformedResponse("bad status line \"\(Self.printable(line))\"") }
        let code = hundreds * 100 + tens * 10 + ones
        guard (100...599).contains(code) else { throw .malformedResponse("status code \(code) out of range") }
        guard code != 101 else { throw .malformedResponse("unexpected 101 Switching Protocols") }
        status = code
        minorVersion = minor
        reason = line.count > 13 ? String(decoding: line[13...], as: UTF8.self) : ""
    }

    /// `name: value`; obsolete line folding and a space before the colon are refused
    /// (RFC 9112 §5.1, §5.2).
    mutating func parseHeader(_ line: [UInt8]) throws(HTTPError) {
        guard let first = line.first, first != UInt8(ascii: " "), first != UInt8(ascii: "\t") else {
            throw .malformedResponse("folded header line")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0,
              line[0..<colon].allSatisfy(Self.isTokenByte)
        else { throw .malformedResponse("bad header line \"\(Self.printable(line))\"") }
        let name = String(decoding: line[0..<colon], as: UTF8.self)
        let value = String(decoding: line[(colon + 1)...], as: UTF8.self)[...].trimmingSpaces
        headers.append((name, String(value)))
    }

    /// The empty line after the headers: decide how the body is framed.
    mutating func endOfHead() throws(HTTPError) {
        let code = status
        headBytes = 0  // from here on the limit applies to each chunk line and to the trailers
        if (100...199).contains(code) {
            // 100 Continue, 103 Early Hints: the real response follows.
            headers = []
            state = .statusLine
            return
        }
        let encodings = values("transfer-encoding").flatMap { $0.split(separator: ",") }.map { $0.trimmingSpaces.lowercased() }
        let lengths = values("content-length").flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            .map { String($0.trimmingSpaces) }
        if isHeadRequest || code == 204 || code == 304 {
            framing = .none
            state = .complete
        } else if !encodings.isEmpty {
            // §6.1: we asked for identity; chunked is the only coding we can undo.
            guard encodings == ["chunked"] else {
                throw .malformedResponse("unsupported Transfer-Encoding \(encodings.joined(separator: ", "))")
            }
            framing = .chunked
            conflictingFraming = !lengths.isEmpty
            state = .chunkSize
        } else if !lengths.isEmpty {
            guard let first = lengths.first, lengths.allSatisfy({ $0 == first }), !first.isEmpty, first.count <= 18,
                  first.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(first)
            else { throw .malformedResponse("bad Content-Length") }
            guard length <= maxBodyBytes else { throw .responseTooLarge(limit: maxBodyBytes) }
            framing = .length(length)
            body.reserveCapacity(length)
            state = length == 0 ? .complete : .body
        } else {
            framing = .untilClose
            state = .body
        }
    }

    /// `1*HEXDIG [; extensions]`, at most 15 digits (well below Int.max).
    mutating func parseChunkSize(_ line: [UInt8]) throws(HTTPError) {
        let sizeText = line.split(separator: UInt8(ascii: ";"), maxSplits: 1, omittingEmptySubsequences: false)[0]
        let digits = String(decoding: sizeText, as: UTF8.self)[...].trimmingSpaces
        guard !digits.isEmpty, digits.count <= 15, let size = Int(digits, radix: 16) else {
            throw .malformedResponse("bad chunk size \"\(Self.printable(line))\"")
        }
        headBytes = 0
        if size == 0 {
            state = .trailers
        } else {
            guard size <= maxBodyBytes - body.count else { throw .responseTooLarge(limit: maxBodyBytes) }
            state = .chunkData(remaining: size)
        }
    }

    /// Every value of the response header `name` (lowercase) so far.
    private func values(_ name: String) -> [String] {
        headers.filter { $0.0.lowercased() == name }.map(\.1)
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// At most 60 bytes of a line, control bytes as "?", for an error message.
    static func printable(_ line: [UInt8]) -> String {
        String(decoding: line.prefix(60).map { $0 < 0x20 || $0 == 0x7F ? UInt8(ascii: "?") : $0 }, as: UTF8.self)
    }

    private func digit(_ byte: UInt8) -> Int? {
        byte >= 0x30 && byte <= 0x39 ? Int(byte - 0x30) : nil
    }
}
