import EventLoop

/// The heads a plain-HTTP exchange passes on (SPEC §5.5, RFC 9110 §7.6): hop-by-hop
/// fields removed (the fixed ones and any the `Connection` field names), `Via` added,
/// and on the request the target in origin-form with `Host` from the absolute URI (RFC
/// 9112 §3.2.2: the URI wins over a disagreeing `Host`). Bodies keep their framing
/// fields (chunked bodies pass unchanged) except a chunked response to an HTTP/1.0
/// client, passed de-chunked. Pure.
public enum ForwardedHead {
    /// Fields that concern one connection only, never forwarded.
    public static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate", "te", "trailer",
        "upgrade",
    ]
    /// Our `Via` pseudonym (RFC 9110 §7.6.3); a request carrying it has looped back here.
    public static let pseudonym = "phosra-gate"

    /// The request for the origin.
    public static func request(_ head: RequestHead, target: ProxyTarget) -> ByteBuffer {
        var out = ByteBuffer(capacity: head.fields.bytes.count + 64)
        out.writeString("\(head.method) \(target.path) HTTP/1.1\r\nHost: \(target.authority)\r\n")
        let named = Set(head.fields.tokens("connection"))
        head.fields.write(to: &out) { !hopByHop.contains($0) && !named.contains($0) && $0 != "host" }
        out.writeString("Via: 1.\(head.minorVersion) \(pseudonym)\r\n\r\n")
        return out
    }

    /// The response for the client; `close` adds `Connection: close` (this is the last
    /// response on the connection), `keepAliveFor10` answers an HTTP/1.0 client that
    /// asked for keep-alive, `dropTransferEncoding` goes with a body passed de-chunked.
    public static func response(_ head: ResponseHead, close: Bool, keepAliveFor10: Bool, dropTransferEncoding: Bool,
                                to out: inout ByteBuffer) {
        out.writeString("HTTP/1.1 \(head.status) ")
        _ = head.fields.bytes.withUnsafeBytes { out.writeBytes(UnsafeRawBufferPointer(rebasing: $0[head.reason])) }
        out.writeString("\r\n")
        let named = Set(head.fields.tokens("connection"))
        head.fields.write(to: &out) {
            !hopByHop.contains($0) && !named.contains($0) && !(dropTransferEncoding && $0 == "transfer-encoding")
        }
        out.writeString("Via: 1.\(head.minorVersion) \(pseudonym)\r\n")
        if close { out.writeString("Connection: close\r\n") } else if keepAliveFor10 { out.writeString("Connection: keep-alive\r\n") }
        out.writeString("\r\n")
    }

    /// Whether the request already passed through this proxy.
    public static func isLoop(_ head: RequestHead) -> Bool {
        head.fields.all("via").contains { $0.lowercased().contains(pseudonym) }
    }
}
