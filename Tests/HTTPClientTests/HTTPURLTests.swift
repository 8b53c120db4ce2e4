import HTTPClient
import TestSupport
import Testing

/// Parsing and building URLs: what a configured `api` value may look like.
@Suite(.blocking) struct HTTPURLTests {
    @Test func aBaseURLWithAPathPrefix() throws {
        let url = try HTTPURL("https://Phosra-API.fly.dev/api/v1")
        #expect(url.scheme == .https)
        #expect(url.host == "phosra-api.fly.dev")
        #expect(url.port == 443)
        #expect(url.path == "/api/v1")
        #expect(url.requestTarget == "/api/v1")
        #expect(url.authority == "phosra-api.fly.dev")
        #expect(!url.isIPLiteral)
        #expect(url.description == "https://phosra-api.fly.dev/api/v1")
    }

    @Test func portsIPv4AndBracketedIPv6() throws {
        let v4 = try HTTPURL("http://127.0.0.1:8080")
        #expect(v4.port == 8080 && v4.isIPLiteral && v4.requestTarget == "/" && v4.authority == "127.0.0.1:8080")
        let v6 = try HTTPURL("https://[::1]:8443/api/v1/")
        #expect(v6.host == "::1" && v6.port == 8443 && v6.isIPLiteral)
        #expect(v6.authority == "[::1]:8443")
        #expect(v6.description == "https://[::1]:8443/api/v1/")
        #expect(try HTTPURL("http://example.test:80/").authority == "example.test")
        #expect(try HTTPURL("HTTP://example.test:/x").port == 80)
    }

    @Test func queryAndFragment() throws {
        let url = try HTTPURL("http://h/p?a=1&b=%20#frag")
        #expect(url.query == "a=1&b=%20")
        #expect(url.requestTarget == "/p?a=1&b=%20")
    }

    @Test(arguments: [
        ("ftp://h/", "the scheme must be http or https"),
        ("h/api", "expected http:// or https://"),
        ("https://user:pw@h/", "user info is not supported"),
        ("https:///api", "no host"),
        ("https://h:0/", "the port must be 1...65535"),
        ("https://h:65536/", "the port must be 1...65535"),
        ("https://h:+80/", "the port must be 1...65535"),
        ("https://h o/", "the host may hold only letters, digits, \"-\", \".\" and \"_\" (IPv6 goes in [ ])"),
        ("https://::1/", "the host may hold only letters, digits, \"-\", \".\" and \"_\" (IPv6 goes in [ ])"),
        ("https://[::1/", "unclosed [ in the host"),
        ("https://[nope]/", "not an IPv6 address in [ ]"),
        ("https://h/a b", "the path holds a character that must be percent-encoded"),
        ("https://h/a%2", "the path holds a character that must be percent-encoded"),
        ("https://h/a?b c", "the query holds a character that must be percent-encoded"),
    ])
    func invalidURLsSayWhy(text: String, why: String) {
        #expect(throws: HTTPError.invalidURL("\"\(text)\": \(why)")) { try HTTPURL(text) }
    }

    @Test func appendingPathsJoinsWithOneSlashAndEncodes() throws {
        let base = try HTTPURL("https://h/api/v1")
        #expect(base.appending(path: "device/policy").requestTarget == "/api/v1/device/policy")
        #expect(base.appending(path: "/device/policy").requestTarget == "/api/v1/device/policy")
        #expect(try HTTPURL("https://h/api/v1/").appending(path: "/device/ack").requestTarget == "/api/v1/device/ack")
        #expect(try HTTPURL("https://h").appending(path: "device/ack").requestTarget == "/device/ack")
        #expect(base.appending(path: "children/a b%/devices").requestTarget == "/api/v1/children/a%20b%25/devices")
        #expect(base.appending(path: "").requestTarget == "/api/v1")
    }

    @Test func queryItemsArePercentEncoded() throws {
        let url = try HTTPURL("https://h/api/v1/device/policy")
            .appending(query: "since_version", "42")
            .appending(queryItems: [(name: "q", value: "a b+c&d=é")])
        #expect(url.requestTarget == "/api/v1/device/policy?since_version=42&q=a%20b%2Bc%26d%3D%C3%A9")
        #expect(url.query == "since_version=42&q=a%20b%2Bc%26d%3D%C3%A9")
    }
}
