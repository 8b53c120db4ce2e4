import Bytes
import Testing

@testable import ProxyCore

@Suite struct PACTests {
    @Test func sendsEverythingToTheAddressTheRequestArrivedOn() {
        #expect(
            PAC.script(for: Endpoint(.v4(0xC0A8_0101), port: 3128))
                == "function FindProxyForURL(url, host) { return \"PROXY 192.168.1.1:3128\"; }\n")
        #expect(PAC.script(for: Endpoint(.v6(high: 0, low: 1), port: 8080)).contains("PROXY [::1]:8080\""))
        #expect(!PAC.script(for: Endpoint(.v4(1), port: 1)).contains("DIRECT"))
    }

    @Test func bothPathsAnyQuery() {
        #expect(PAC.isPACPath("/proxy.pac"))
        #expect(PAC.isPACPath("/wpad.dat?x=1"))
        #expect(!PAC.isPACPath("/proxy.pac/x"))
        #expect(!PAC.isPACPath("/"))
    }

    @Test func theResponseIsAProxyAutoconfig() {
        var out = ByteBuffer()
        ProxyResponse.pac(for: Endpoint(.v4(0x7F00_0001), port: 3128), keepAlive: true, headOnly: false, to: &out)
        let text = out.readString(length: out.readableBytes) ?? ""
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: application/x-ns-proxy-autoconfig\r\n"))
        #expect(text.hasSuffix("\r\n\r\nfunction FindProxyForURL(url, host) { return \"PROXY 127.0.0.1:3128\"; }\n"))
        #expect(!text.contains("Connection: close"))
    }
}
