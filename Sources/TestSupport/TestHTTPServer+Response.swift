import Foundation

/// Writing a `Response` as HTTP/1.1 bytes, framed as asked (Go's net/http by default).
extension TestHTTPServer {
    /// The bytes, and whether the connection must close after them.
    static func serialize(_ response: Response, for request: Request?) -> (bytes: [UInt8], closes: Bool) {
        let bodiless =
            (100...199).contains(response.status) || response.status == 204 || response.status == 304
            || request?.method == "HEAD"
        var framing = response.framing
        if case .automatic = framing {
            if bodiless && request?.method != "HEAD" {
                framing = .none
            } else {
                framing = response.body.count <= 2048 ? .contentLength : .chunked(chunkSize: 4096)
            }
        }
        var head = "HTTP/1.1 \(response.status) \(response.reason ?? statusText(response.status))\r\n"
        for (name, value) in response.headers { head += "\(name): \(value)\r\n" }
        var body: [UInt8] = []
        var closes = response.headers.contains { $0.0.lowercased() == "connection" && $0.1.lowercased() == "close" }
        switch framing {
        case .automatic, .none:
            break
        case .contentLength:
            head += "Content-Length: \(response.body.count)\r\n"
            if request?.method != "HEAD" { body = response.body }
        case .chunked(let size):
            head += "Transfer-Encoding: chunked\r\n"
            if request?.method != "HEAD" {
                var offset = 0
                while offset < response.body.count {
                    let end = min(offset + max(size, 1), response.body.count)
                    body +=
                        Array(String(end - offset, radix: 16).utf8) + [13, 10] + response.body[offset..<end] + [13, 10]
                    offset = end
                }
                body += Array("0\r\n\r\n".utf8)
            }
        case .closeDelimited:
            body = response.body
            closes = true
        }
        head += "\r\n"
        return (Array(head.utf8) + body, closes)
    }

    /// Go's `http.StatusText` for the codes the tests use.
    public static func statusText(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }
}
