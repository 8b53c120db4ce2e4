import DomainMatch
import Testing

@testable import ProxyCore

@Suite struct ProxyTargetTests {
    @Test func connectTargetsNeedAPort() throws {
        let target = try ProxyTarget.connect("WWW.Example.org:443")
        #expect(target.host == .name(try QueryName.parse("www.example.org")))
        #expect(target.port == 443)
        #expect(try ProxyTarget.connect("10.0.0.1:8443").host == .address(IPAddress("10.0.0.1")!))
        #expect(try ProxyTarget.connect("[::1]:443").host == .address(IPAddress("::1")!))
        for bad in [
            "example.org", "example.org:", "example.org:0", "example.org:65536", "example.org:+1", ":443", "[::1]",
            "[::1]x:443", "::1:443",
        ] {
            #expect(throws: ProxyError.self, "\(bad)") { try ProxyTarget.connect(bad) }
        }
    }

    @Test func invalidHostsAreNamed() {
        #expect(throws: ProxyError.invalidHost("bad_host!")) { try ProxyTarget.connect("bad_host!:443") }
        #expect(throws: ProxyError.invalidHost("a..b")) { try ProxyTarget.absolute("http://a..b/") }
        #expect(throws: ProxyError.invalidHost("[1.2.3.4]")) { try ProxyTarget.connect("[1.2.3.4]:443") }
    }

    @Test func absoluteTargetsSplitIntoHostPortAndPath() throws {
        let target = try ProxyTarget.absolute("HTTP://Example.org:8080/a/b?c=d#frag")
        #expect(target.host == .name(try QueryName.parse("example.org")))
        #expect(target.port == 8080)
        #expect(target.path == "/a/b?c=d")
        #expect(target.authority == "Example.org:8080")
        let bare = try ProxyTarget.absolute("http://example.org?q")
        #expect(bare.port == 80)
        #expect(bare.path == "/?q")
        #expect(try ProxyTarget.absolute("http://[2001:db8::1]/").host == .address(IPAddress("2001:db8::1")!))
        #expect(try ProxyTarget.absolute("http://bücher.de/").host == .name(try QueryName.parse("xn--bcher-kva.de")))
        #expect(try ProxyTarget.absolute("hTtP://example.org#top").path == "/")
    }

    /// The target is bytes (RFC 9112 §3.2): a `/` followed by a combining mark still ends
    /// the authority, though the two make one `Character`.
    @Test func theAuthorityEndsAtTheFirstDelimiterByte() throws {
        let target = try ProxyTarget.absolute("http://example.org/\u{301}x?y#z")
        #expect(target.host == .name(try QueryName.parse("example.org")))
        #expect(target.authority == "example.org")
        #expect(target.path == "/\u{301}x?y")
    }

    @Test func otherSchemesAndUserInfoAreRefused() {
        for bad in [
            "https://example.org/", "ftp://example.org/", "http://user:pw@example.org/", "http:/example.org", "http://",
            // Letters only are compared without case: 0x0F is not "/" in any case.
            "http:/\u{0F}example.org/",
        ] {
            #expect(throws: ProxyError.self, "\(bad)") { try ProxyTarget.absolute(bad) }
        }
    }
}
