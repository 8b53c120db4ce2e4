import HTTP1

/// An HTTP/1 head as a client or a server sends it: where it ends (`HeadScanner`), the
/// request or response parse, and the heads the proxy forwards (`HTTPHeadForwarding`).
enum HTTPHeadTarget {
    static let target = FuzzTarget(
        "http-head",
        "the head's end is found the same fed in any pieces; a parsed head has token names, values without "
            + "CR/LF/controls or edge white space, a token method; written again it parses to the same head; "
            + "a forwarded head parses and carries no hop-by-hop field"
    ) { input throws(PropertyViolation) in
        try scannerAgrees(input, limit: 256)
        var scanner = HeadScanner(limit: 16_384)
        let end = try? scan(&scanner, input).get()
        let head = end.map { Array(input[..<$0]) } ?? input
        if let request = try? RequestHead(head) {
            try wellFormed(request.fields)
            try check(HTTPSyntax.isToken(request.method), "method \(request.method) is not a token")
            try check(
                !request.target.isEmpty && request.target.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F },
                "target \(request.target) has white space or controls")
            try check((0...9).contains(request.minorVersion), "minor version \(request.minorVersion)")
            try HTTPHeadForwarding.requestRoundTrips(request)
            try HTTPHeadForwarding.forwardedRequest(request)
        }
        if let response = try? ResponseHead(head) {
            try wellFormed(response.fields)
            try check((100...999).contains(response.status), "status \(response.status)")
            try HTTPHeadForwarding.responseRoundTrips(response)
            try HTTPHeadForwarding.forwardedResponse(response)
        }
    }

    /// Fed one growing prefix at a time to one scanner, the head ends where it ends when
    /// the whole input is scanned at once; a head too large is refused either way.
    static func scannerAgrees(_ input: [UInt8], limit: Int) throws(PropertyViolation) {
        var whole = HeadScanner(limit: limit)
        let expected = scan(&whole, input)
        var growing = HeadScanner(limit: limit)
        var found: Result<Int?, HTTP1Error> = .success(nil)
        // Every prefix of a short input; for a long one, steps that still cross each byte.
        let step = max(1, input.count / 512)
        var length = 0
        while length < input.count {
            length = min(input.count, length + step)
            found = scan(&growing, Array(input[..<length]))
            if case .success(nil) = found { continue }
            break
        }
        switch (expected, found) {
        case (.success(let a), .success(let b)):
            try check(a == b, "head end \(String(describing: b)) fed in pieces, \(String(describing: a)) at once")
        case (.failure(let a), .failure(let b)):
            try check(a == b, "\(b) fed in pieces, \(a) at once")
        default:
            throw PropertyViolation(problem: "scanner: \(found) fed in pieces, \(expected) at once")
        }
    }

    static func scan(_ scanner: inout HeadScanner, _ bytes: [UInt8]) -> Result<Int?, HTTP1Error> {
        bytes.withUnsafeBytes { raw in Result { () throws(HTTP1Error) in try scanner.scan(raw) } }
    }

    /// Field names are tokens; values hold no CR, LF or other control but HTAB, and no
    /// white space at either end (it was trimmed). The start line holds no line end.
    static func wellFormed(_ fields: HeaderFields) throws(PropertyViolation) {
        let bytes = fields.bytes
        try check(!bytes[fields.startLine].contains { $0 == 0x0A || $0 == 0x0D }, "start line with a line end")
        for (number, field) in fields.fields.enumerated() {
            let name = bytes[field.name]
            let value = bytes[field.value]
            try check(!name.isEmpty && name.allSatisfy(HTTPSyntax.isTokenByte), "field \(number + 1): bad name")
            try check(
                value.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) },
                "field \(number + 1): a control byte in the value")
            let edges: [UInt8] = [value.first, value.last].compactMap { $0 }
            try check(!edges.contains { $0 == 0x20 || $0 == 0x09 }, "field \(number + 1): untrimmed value")
        }
    }
}
