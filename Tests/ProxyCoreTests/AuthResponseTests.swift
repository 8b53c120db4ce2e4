import Bytes
import HTTP1
import Testing

@testable import ProxyCore

/// The responses of proxy authentication, read back with the HTTP/1 parser.
@Suite struct AuthResponseTests {
    static func read(_ out: inout ByteBuffer) throws -> (head: ResponseHead, body: String) {
        let text = out.readString(length: out.readableBytes) ?? ""
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = try ResponseHead(Array((parts[0] + "\r\n\r\n").utf8))
        return (head, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    @Test func aChallengeWithEachKeepAlive() throws {
        for keepAlive in [true, false] {
            var out = ByteBuffer()
            ProxyResponse.authenticationRequired(keepAlive: keepAlive, to: &out)
            let (head, body) = try Self.read(&out)
            #expect(head.status == 407)
            #expect(head.reasonPhrase == "Proxy Authentication Required")
            #expect(head.fields.all("Proxy-Authenticate") == [#"Basic realm="phosra-gate""#])
            #expect(head.fields.first("Content-Length") == "\(body.utf8.count)")
            #expect(body == "phosra-gate: proxy authentication required\n")
            #expect(head.keepAlive == keepAlive)
        }
    }

    /// A 407 made as an error, as `ProxyError.credentials` is, carries the challenge too.
    @Test func every407CarriesTheChallenge() throws {
        let error = ProxyError.credentials(.badBase64)
        #expect(error.status == 407)
        var out = ByteBuffer()
        ProxyResponse.error(error.status, error.description, to: &out)
        let (head, body) = try Self.read(&out)
        #expect(head.fields.all("Proxy-Authenticate") == [#"Basic realm="phosra-gate""#])
        #expect(body == "phosra-gate: Proxy-Authorization: Basic credentials are not base64\n")
        var other = ByteBuffer()
        ProxyResponse.error(403, "no", to: &other)
        #expect(try !Self.read(&other).head.fields.contains("Proxy-Authenticate"))
    }

    @Test func tooManyFailuresSaysWhenAndCloses() throws {
        let second: UInt64 = 1_000_000_000
        for (left, seconds) in [(50 * second, 50), (59 * second + 1, 60), (1, 1), (0, 1), (60 * second, 60)] {
            var out = ByteBuffer()
            ProxyResponse.tooManyAuthenticationFailures(retryAfter: left, to: &out)
            let (head, body) = try Self.read(&out)
            #expect(head.status == 429)
            #expect(head.fields.first("Retry-After") == "\(seconds)")
            #expect(!head.keepAlive)
            #expect(head.fields.first("Content-Length") == "\(body.utf8.count)")
            #expect(body == "phosra-gate: too many failed proxy logins; try again in \(seconds) s\n")
        }
    }
}
