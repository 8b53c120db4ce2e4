import HTTP1

/// One malformed HTTP/1.1 head and what HTTP1 calls it. The same table runs through the
/// parser itself (HTTP1Tests), the proxy's state machine (ProxyCoreTests), the real proxy
/// (HTTPProxyIntegrationTests) and the real client against a raw server
/// (HTTPClientTests), so that every reader refuses the same heads with the same name.
public struct MalformedHead: Sendable, CustomStringConvertible {
    /// What is wrong, in words (the test's argument label).
    public let name: String
    /// The whole request head, or nil for a case that only a response can have.
    public let request: [UInt8]?
    /// The whole response head, or nil for a case that only a request can have.
    public let response: [UInt8]?
    /// What HTTP1 names it (for a head too large, with the limit of the reader: see
    /// `expected(headLimit:)`).
    public let error: HTTP1Error

    public var description: String { name }

    /// `error`, with a too-large case carrying the limit of the reader at hand.
    public func expected(headLimit: Int) -> HTTP1Error {
        switch error {
        case .headTooLarge: .headTooLarge(limit: headLimit)
        case .startLineTooLong: .startLineTooLong(limit: headLimit)
        default: error
        }
    }

    /// What a proxy or a server answers the request with (RFC 9112 §5, RFC 6585 §5,
    /// RFC 9110 §15.5.15 and §15.6.6).
    public var requestStatus: Int {
        switch error {
        case .headTooLarge: 431
        case .startLineTooLong: 414
        case .unsupportedVersion: 505
        default: 400
        }
    }
}

public enum MalformedHeads {
    /// Field lines wrong in ways a request and a response can share, each placed second
    /// (after one good field), so the error names line 2 on both sides. A head too large
    /// is over every reader's limit (16 KiB for the proxy, 64 KiB for the client).
    static let fieldCases: [(name: String, lines: String, error: HTTP1Error, requestOnly: Bool)] = [
        ("a space in a field name", "Bad Name: x", .invalidFieldName(line: 2), false),
        ("a non-token byte in a field name", "X-(bad): x", .invalidFieldName(line: 2), false),
        ("an empty field name", ": x", .invalidFieldName(line: 2), false),
        ("NUL in a field name", "X\u{0}: x", .invalidFieldName(line: 2), false),
        ("obs-fold", "X-Folded: a\r\n b", .obsoleteLineFolding(line: 3), false),
        ("obs-fold with a tab", "X-Folded: a\r\n\tb", .obsoleteLineFolding(line: 3), false),
        ("a space before the colon", "X-Space : x", .whitespaceBeforeColon(line: 2), false),
        ("a tab before the colon", "X-Tab\t: x", .whitespaceBeforeColon(line: 2), false),
        ("no colon", "NoColon", .missingColon(line: 2), false),
        ("a bare CR in a value", "X-CR: a\rb", .bareCarriageReturn(line: 2), false),
        ("a bare CR before the line end", "X-CR: a\r", .bareCarriageReturn(line: 2), false),
        ("a bare CR in a name", "X\rY: a", .bareCarriageReturn(line: 2), false),
        ("NUL in a value", "X-Nul: a\u{0}b", .invalidFieldValue(line: 2), false),
        ("DEL in a value", "X-Del: a\u{7f}", .invalidFieldValue(line: 2), false),
        ("an escape sequence in a value", "X-Esc: \u{1b}[2J", .invalidFieldValue(line: 2), false),
        ("a head too large", "X-Big: " + String(repeating: "a", count: 70_000), .headTooLarge(limit: 0), false),
        ("Content-Length fields that disagree", "Content-Length: 2\r\nContent-Length: 3", .badContentLength, false),
        ("a Content-Length list that disagrees", "Content-Length: 2, 3", .badContentLength, false),
        ("a Content-Length that is not a number", "Content-Length: 12x", .badContentLength, false),
        ("a negative Content-Length", "Content-Length: -1", .badContentLength, false),
        ("a Content-Length with a sign", "Content-Length: +5", .badContentLength, false),
        ("a Content-Length of 19 digits", "Content-Length: 1234567890123456789", .badContentLength, false),
        (
            "chunked not the last coding", "Transfer-Encoding: chunked, gzip",
            .unsupportedTransferCoding("chunked, gzip"), false
        ),
        // A response with both is read by its Transfer-Encoding (RFC 9112 §6.3 rule 3);
        // a request with both is refused.
        (
            "Transfer-Encoding with Content-Length", "Transfer-Encoding: chunked\r\nContent-Length: 5",
            .transferEncodingWithContentLength, true
        ),
    ]

    static let requestLines: [(name: String, line: String, error: HTTP1Error)] = [
        ("two spaces in the request line", "GET  http://origin.test/ HTTP/1.1", .malformedRequestLine),
        ("HTTP/2.0 in the request line", "GET http://origin.test/ HTTP/2.0", .unsupportedVersion("HTTP/2.0")),
        ("HTTP/0.9 as a version", "GET http://origin.test/ HTTP/0.9", .unsupportedVersion("HTTP/0.9")),
        ("a lowercase version", "GET http://origin.test/ http/1.1", .malformedRequestLine),
        ("a method that is not a token", "G@T http://origin.test/ HTTP/1.1", .malformedRequestLine),
        ("DEL in the target", "GET http://origin.test/\u{7f} HTTP/1.1", .malformedRequestLine),
        ("a bare CR after the version", "GET http://origin.test/ HTTP/1.1\r", .malformedRequestLine),
        ("no version", "GET http://origin.test/", .malformedRequestLine),
        ("not HTTP at all", "THIS IS NOT HTTP", .malformedRequestLine),
        (
            "a request line too long", "GET http://origin.test/" + String(repeating: "a", count: 70_000) + " HTTP/1.1",
            .startLineTooLong(limit: 0)
        ),
    ]

    static let statusLines: [(name: String, line: String, error: HTTP1Error)] = [
        ("a four-digit status", "HTTP/1.1 2000 OK", .malformedStatusLine("HTTP/1.1 2000 OK")),
        ("HTTP/2 in the status line", "HTTP/2 200", .malformedStatusLine("HTTP/2 200")),
        ("not HTTP at all", "SSH-2.0-OpenSSH_9.2", .malformedStatusLine("SSH-2.0-OpenSSH_9.2")),
        ("a status below 100", "HTTP/1.1 099 Low", .statusOutOfRange(99)),
        ("a control character in the reason", "HTTP/1.1 200 O\u{1}K", .malformedStatusLine("HTTP/1.1 200 O?K")),
        ("a bare CR after the reason", "HTTP/1.1 200 OK\r", .malformedStatusLine("HTTP/1.1 200 OK?")),
    ]

    public static let all: [MalformedHead] = {
        var cases: [MalformedHead] = []
        for field in fieldCases {
            cases.append(
                MalformedHead(
                    name: field.name,
                    request: Array(
                        "GET http://origin.test/ HTTP/1.1\r\nHost: origin.test\r\n\(field.lines)\r\n\r\n".utf8),
                    response: field.requestOnly
                        ? nil : Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\(field.lines)\r\n\r\n".utf8),
                    error: field.error))
        }
        for start in requestLines {
            cases.append(
                MalformedHead(
                    name: "request: " + start.name, request: Array("\(start.line)\r\nHost: origin.test\r\n\r\n".utf8),
                    response: nil, error: start.error))
        }
        for start in statusLines {
            cases.append(
                MalformedHead(
                    name: "response: " + start.name, request: nil,
                    response: Array("\(start.line)\r\nContent-Length: 0\r\n\r\n".utf8), error: start.error))
        }
        return cases
    }()

    /// The cases a request can have (for a proxy or a server).
    public static var requests: [MalformedHead] { all.filter { $0.request != nil } }
    /// The cases a response can have (for a client).
    public static var responses: [MalformedHead] { all.filter { $0.response != nil } }
}
