import Bytes
import DomainMatch
import HTTP1
import Testing

@testable import ProxyCore

@Suite struct ForwardedHeadTests {
    @Test func theRequestGoesOutInOriginFormWithoutHopByHopFields() throws {
        let head = try RequestHead(
            Array(
                """
                GET http://Example.org:8080/p?q=1 HTTP/1.1\r\nHost: other.example\r\nConnection: keep-alive, X-Private\r\n\
                Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\nTE: trailers\r\nTrailer: X\r\nUpgrade: h2c\r\n\
                Keep-Alive: 5\r\nX-Private: 1\r\nAccept: */*\r\nVia: 1.1 other\r\nContent-Length: 0\r\n\r\n
                """.utf8))
        let target = try ProxyTarget.absolute(head.target)
        var out = ForwardedHead.request(head, target: target)
        #expect(
            out.readString(length: out.readableBytes) == """
                GET /p?q=1 HTTP/1.1\r\nHost: Example.org:8080\r\nAccept: */*\r\nVia: 1.1 other\r\nContent-Length: 0\r\n\
                Via: 1.1 phosra-gate\r\n\r\n
                """)
    }

    @Test func theChildsPageGetsWhoAsksAndNeverAClientsOwnClaim() throws {
        let head = try RequestHead(
            Array(
                """
                POST http://gate.home.arpa/ask HTTP/1.1\r\nHost: gate.home.arpa\r\nPhosra-Child-Profile: default\r\n\
                phosra-child-address: 10.0.0.9\r\nPHOSRA-CHILD-MAC: 02:00:00:00:00:09\r\nPhosra-Children: 2\r\nContent-Length: 0\r\n\r\n
                """.utf8))
        let target = try ProxyTarget.absolute(head.target)
        let child = ChildIdentity(
            address: IPAddress("192.168.1.20")!, mac: MACAddress("aa:bb:cc:dd:ee:01"), profile: "kid")
        var out = ForwardedHead.request(head, target: target, child: child)
        #expect(
            out.readString(length: out.readableBytes) == """
                POST /ask HTTP/1.1\r\nHost: gate.home.arpa\r\nPhosra-Children: 2\r\nContent-Length: 0\r\n\
                Phosra-Child-Address: 192.168.1.20\r\nPhosra-Child-MAC: aa:bb:cc:dd:ee:01\r\nPhosra-Child-Profile: kid\r\n\
                Via: 1.1 phosra-gate\r\n\r\n
                """)
        // To any other origin a client's claim is dropped too, and none is added.
        var plain = ForwardedHead.request(head, target: target)
        #expect(!(plain.readString(length: plain.readableBytes) ?? "").lowercased().contains("phosra-child-"))
    }

    @Test func theForwardedResponseLosesHopByHopFieldsAndGainsVia() throws {
        let head = try ResponseHead(
            Array(
                """
                HTTP/1.1 200 OK\r\nConnection: close, X-Secret\r\nKeep-Alive: timeout=5\r\nX-Secret: 1\r\nContent-Length: 2\r\n\
                Proxy-Authenticate: Basic\r\nUpgrade: h2c\r\nX-Kept: yes\r\n\r\n
                """.utf8))
        var out = ByteBuffer()
        ForwardedHead.response(head, close: true, keepAliveFor10: false, dropTransferEncoding: false, to: &out)
        let text = out.readString(length: out.readableBytes) ?? ""
        #expect(
            text
                == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Kept: yes\r\nVia: 1.1 phosra-gate\r\nConnection: close\r\n\r\n"
        )
    }

    /// RFC 9112 §6.3 rule 3: an intermediary removes Content-Length from a message that
    /// also has Transfer-Encoding before passing it on.
    @Test func aContentLengthBesideTransferEncodingIsNotPassedOn() throws {
        let head = try ResponseHead(
            Array(
                "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\nX-Kept: yes\r\n\r\n".utf8))
        var out = ByteBuffer()
        ForwardedHead.response(head, close: false, keepAliveFor10: false, dropTransferEncoding: false, to: &out)
        #expect(
            out.readString(length: out.readableBytes)
                == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Kept: yes\r\nVia: 1.1 phosra-gate\r\n\r\n")
    }

    @Test func aRequestCarryingOurViaLoops() throws {
        let looped = try RequestHead(Array("GET http://x/ HTTP/1.1\r\nVia: 1.1 a, 1.1 Phosra-Gate\r\n\r\n".utf8))
        #expect(ForwardedHead.isLoop(looped))
        #expect(!ForwardedHead.isLoop(try RequestHead(Array("GET http://x/ HTTP/1.1\r\nVia: 1.1 a\r\n\r\n".utf8))))
        #expect(!ForwardedHead.isLoop(try RequestHead(Array("GET http://x/ HTTP/1.1\r\n\r\n".utf8))))
    }
}
