import Bytes
import HTTP1

/// The heads a plain-HTTP exchange passes on (docs/proxy.md#plain-http, RFC 9110 §7.6): hop-by-hop
/// fields removed (the fixed ones and any the `Connection` field names), `Via` added,
/// and on the request the target in origin-form with `Host` from the absolute URI (RFC
/// 9112 §3.2.2: the URI wins over a disagreeing `Host`). Bodies keep their framing
/// fields (chunked bodies pass unchanged) except a chunked response to an HTTP/1.0
/// client, passed de-chunked. Pure.
public enum ForwardedHead {
    /// Our `Via` pseudonym (RFC 9110 §7.6.3); a request carrying it has looped back here.
    public static let pseudonym = "phosra-gate"

    /// The request for the origin. `child` is who asks, for the gateway's own child's page
    /// only: written as `Phosra-Child-*` fields, which the page believes from the gateway
    /// alone; a client's own `Phosra-Child-*` fields are never passed on.
    public static func request(_ head: RequestHead, target: ProxyTarget, child: ChildIdentity? = nil) -> ByteBuffer {
        var out = ByteBuffer(capacity: head.fields.bytes.count + 64)
        out.writeString("\(head.method) \(target.path) HTTP/1.1\r\nHost: \(target.authority)\r\n")
        // RFC 9110 §7.6.2: an intermediary forwarding OPTIONS or TRACE decrements Max-Forwards.
        let hops = head.method == "OPTIONS" || head.method == "TRACE" ? head.maxForwards : nil
        write(head.fields, to: &out) {
            head.fields.isNamed($0, "host") || (hops != nil && head.fields.isNamed($0, "max-forwards"))
                || isChildIdentity($0, in: head.fields)
        }
        if let hops { out.writeString("Max-Forwards: \(max(hops - 1, 0))\r\n") }
        if let child {
            out.writeString("\(ChildIdentity.addressField): \(child.address)\r\n")
            if let mac = child.mac { out.writeString("\(ChildIdentity.macField): \(mac)\r\n") }
            out.writeString("\(ChildIdentity.profileField): \(child.profile)\r\n")
        }
        out.writeString("Via: 1.\(head.minorVersion) \(pseudonym)\r\n\r\n")
        return out
    }

    /// The response for the client; `close` adds `Connection: close` (this is the last
    /// response on the connection), `keepAliveFor10` answers an HTTP/1.0 client that
    /// asked for keep-alive, `dropTransferEncoding` goes with a body passed de-chunked.
    /// A Content-Length beside Transfer-Encoding is dropped (RFC 9112 §6.3 rule 3: an
    /// intermediary removes it before forwarding).
    public static func response(
        _ head: ResponseHead, close: Bool, keepAliveFor10: Bool, dropTransferEncoding: Bool,
        to out: inout ByteBuffer
    ) {
        out.writeString("HTTP/1.1 \(head.status) ")
        _ = head.fields.bytes.withUnsafeBytes { out.writeBytes(UnsafeRawBufferPointer(rebasing: $0[head.reason])) }
        out.writeString("\r\n")
        let dropLength = head.hasConflictingFraming
        write(head.fields, to: &out) { field in
            (dropTransferEncoding && head.fields.isNamed(field, "transfer-encoding"))
                || (dropLength && head.fields.isNamed(field, "content-length"))
        }
        out.writeString("Via: 1.\(head.minorVersion) \(pseudonym)\r\n")
        if close {
            out.writeString("Connection: close\r\n")
        } else if keepAliveFor10 {
            out.writeString("Connection: keep-alive\r\n")
        }
        out.writeString("\r\n")
    }

    /// Whether the request already passed through this proxy.
    public static func isLoop(_ head: RequestHead) -> Bool {
        head.fields.anyValue(of: "via", contains: pseudonym)
    }

    /// Appends, as `name: value` lines copied byte for byte, every field that is neither
    /// hop-by-hop (a fixed one, or one the `Connection` field lists) nor one `drop` names.
    /// Names are compared as bytes: no field becomes a `String` on the way.
    static func write(_ fields: HeaderFields, to out: inout ByteBuffer, dropping drop: (HeaderFields.Field) -> Bool) {
        let listsFields = fields.contains("connection")
        fields.bytes.withUnsafeBytes { raw in
            for field in fields.fields {
                if isHopByHop(field, in: fields) || (listsFields && fields.isListed(field, in: "connection"))
                    || drop(field)
                {
                    continue
                }
                out.writeBytes(UnsafeRawBufferPointer(rebasing: raw[field.name]))
                out.writeString(": ")
                out.writeBytes(UnsafeRawBufferPointer(rebasing: raw[field.value]))
                out.writeString("\r\n")
            }
        }
    }

    /// Whether a field is one of the child's page's `Phosra-Child-*` fields.
    static func isChildIdentity(_ field: HeaderFields.Field, in fields: HeaderFields) -> Bool {
        let prefix = ChildIdentity.prefix
        guard field.name.count > prefix.count else { return false }
        return fields.bytes.withUnsafeBytes { raw in
            for (offset, byte) in prefix.enumerated() where raw[field.name.lowerBound + offset] | 0x20 != byte {
                return false
            }
            return true
        }
    }

    /// Fields that concern one connection only, never forwarded: Connection, Keep-Alive,
    /// Proxy-Connection, Proxy-Authorization, Proxy-Authenticate, TE, Trailer, Upgrade
    /// (RFC 9110 §7.6.1). Only names of the field's length are compared (this runs for
    /// every field of every forwarded head).
    static func isHopByHop(_ field: HeaderFields.Field, in fields: HeaderFields) -> Bool {
        switch field.name.count {
        case 2: fields.isNamed(field, "te")
        case 7: fields.isNamed(field, "trailer") || fields.isNamed(field, "upgrade")
        case 10: fields.isNamed(field, "connection") || fields.isNamed(field, "keep-alive")
        case 16: fields.isNamed(field, "proxy-connection")
        case 18: fields.isNamed(field, "proxy-authenticate")
        case 19: fields.isNamed(field, "proxy-authorization")
        default: false
        }
    }
}
