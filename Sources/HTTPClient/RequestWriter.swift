import HTTP1

/// The bytes of a request: request line, headers (RFC 9112 §3, §5), body. Names are
/// checked with HTTP1's token rule, the one every parser here applies on receipt.
enum RequestWriter {
    /// Headers the client writes itself or never sends; a caller's are dropped.
    static let ownedHeaders: Set<String> = [
        "host", "content-length", "transfer-encoding", "connection", "keep-alive", "te", "upgrade", "accept-encoding",
    ]

    /// - Throws: `.invalidRequest` for a method or header name that is not a token, or a
    ///   header value holding CR, LF or NUL (named by the header, never by its value).
    static func serialize(_ request: HTTPRequest, userAgent: String) throws(HTTPError) -> [UInt8] {
        guard HTTPSyntax.isToken(request.method) else {
            throw .invalidRequest("method \"\(request.method)\" is not a token")
        }
        var fields: [(String, String)] = [("Host", request.url.authority)]
        let callerAgent = request.headers.contains { $0.0.lowercased() == "user-agent" }
        if !callerAgent { fields.append(("User-Agent", userAgent)) }
        for (name, value) in request.headers where !ownedHeaders.contains(name.lowercased()) {
            fields.append((name, value))
        }
        fields.append(("Accept-Encoding", "identity"))
        fields.append(("Connection", "keep-alive"))
        if !request.body.isEmpty || ["POST", "PUT", "PATCH"].contains(request.method) {
            fields.append(("Content-Length", String(request.body.count)))
        }
        var bytes = Array("\(request.method) \(request.url.requestTarget) HTTP/1.1\r\n".utf8)
        bytes.reserveCapacity(bytes.count + 256 + request.body.count)
        for (name, value) in fields {
            guard HTTPSyntax.isToken(name) else {
                throw .invalidRequest("header name \"\(HTTPSyntax.printable(name.utf8))\" is not a token")
            }
            guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw .invalidRequest("the value of header \(name) holds a line break or NUL")
            }
            bytes += name.utf8
            bytes += ": ".utf8
            bytes += value.utf8
            bytes += "\r\n".utf8
        }
        bytes += "\r\n".utf8
        bytes += request.body
        return bytes
    }
}
