import Bytes
import HTTP1
import ProxyCore

/// Heads written again: by a plain writer here (HTTP1 has none of its own), and by the
/// proxy's `ForwardedHead`, whose output is the next hop's input.
enum HTTPHeadForwarding {
    /// Fields as byte pairs, for comparing two heads exactly.
    static func pairs(_ fields: HeaderFields) -> [[UInt8]] {
        fields.fields.map { Array(fields.bytes[$0.name]) + [0x3A] + Array(fields.bytes[$0.value]) }
    }

    static func fieldLines(_ fields: HeaderFields) -> [UInt8] {
        var out: [UInt8] = []
        for field in fields.fields {
            out += fields.bytes[field.name] + Array(": ".utf8) + fields.bytes[field.value] + [0x0D, 0x0A]
        }
        return out + [0x0D, 0x0A]
    }

    static func requestRoundTrips(_ request: RequestHead) throws(PropertyViolation) {
        let bytes =
            Array("\(request.method) \(request.target) HTTP/1.\(request.minorVersion)\r\n".utf8)
            + fieldLines(request.fields)
        let again: RequestHead
        do {
            again = try RequestHead(bytes)
        } catch {
            throw PropertyViolation(problem: "request written again does not parse: \(error)")
        }
        try check(
            again.method == request.method && again.target == request.target
                && again.minorVersion == request.minorVersion,
            "request line changed")
        try check(pairs(again.fields) == pairs(request.fields), "request fields changed")
        try check(again.keepAlive == request.keepAlive, "keep-alive changed")
        let framing = Result { () throws(HTTP1Error) in try request.bodyFraming() }
        try check(framing == Result { () throws(HTTP1Error) in try again.bodyFraming() }, "framing changed")
        if case .success(.length(let count)) = framing { try check(count >= 0, "negative length \(count)") }
    }

    static func responseRoundTrips(_ response: ResponseHead) throws(PropertyViolation) {
        let status = String(response.status)
        let bytes =
            Array("HTTP/1.\(response.minorVersion) \(status) ".utf8) + response.fields.bytes[response.reason]
            + [0x0D, 0x0A] + fieldLines(response.fields)
        let again: ResponseHead
        do {
            again = try ResponseHead(bytes)
        } catch {
            throw PropertyViolation(problem: "response written again does not parse: \(error)")
        }
        try check(again.status == response.status && again.minorVersion == response.minorVersion, "status changed")
        try check(
            again.fields.bytes[again.reason].elementsEqual(response.fields.bytes[response.reason]), "reason changed")
        try check(pairs(again.fields) == pairs(response.fields), "response fields changed")
        for method in ["GET", "HEAD"] {
            let framing = Result { () throws(HTTP1Error) in try response.bodyFraming(requestMethod: method) }
            try check(
                framing == Result { () throws(HTTP1Error) in try again.bodyFraming(requestMethod: method) },
                "framing changed")
        }
    }

    /// Fields that concern one connection (RFC 9110 §7.6.1), never forwarded.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te",
        "trailer", "upgrade",
    ]

    /// The fields a forwarded head must keep: not hop-by-hop, not listed in Connection,
    /// not one `dropped` names; as byte pairs.
    static func kept(_ fields: HeaderFields, dropping dropped: Set<String>) -> [[UInt8]] {
        let listed = Set(fields.tokens("connection"))
        return fields.fields.filter { field in
            let name = fields.name(field).lowercased()
            return !hopByHop.contains(name) && !listed.contains(name) && !dropped.contains(name)
        }.map { Array(fields.bytes[$0.name]) + [0x3A] + Array(fields.bytes[$0.value]) }
    }

    static func forwardedRequest(_ request: RequestHead) throws(PropertyViolation) {
        guard let target = try? ProxyTarget.absolute(request.target) else { return }
        let out = ForwardedHead.request(request, target: target)
        let bytes = out.withUnsafeReadableBytes { Array($0) }
        let forwarded: RequestHead
        do {
            forwarded = try RequestHead(bytes)
        } catch {
            throw PropertyViolation(problem: "forwarded request does not parse: \(error)")
        }
        try check(forwarded.method == request.method && forwarded.target == target.path, "forwarded request line")
        var expected = [Array("Host:\(target.authority)".utf8)] + kept(request.fields, dropping: ["host"])
        expected.append(Array("Via:1.\(request.minorVersion) \(ForwardedHead.pseudonym)".utf8))
        try check(pairs(forwarded.fields) == expected, "forwarded request fields are not the kept ones")
    }

    static func forwardedResponse(_ response: ResponseHead) throws(PropertyViolation) {
        let dropChunked = response.fields.transferCodings.lastIsChunked
        var out = ByteBuffer()
        ForwardedHead.response(
            response, close: response.status % 2 == 0, keepAliveFor10: true, dropTransferEncoding: dropChunked,
            to: &out)
        let bytes = out.withUnsafeReadableBytes { Array($0) }
        let forwarded: ResponseHead
        do {
            forwarded = try ResponseHead(bytes)
        } catch {
            throw PropertyViolation(problem: "forwarded response does not parse: \(error)")
        }
        try check(forwarded.status == response.status, "forwarded status")
        var dropped: Set<String> = dropChunked ? ["transfer-encoding"] : []
        if response.hasConflictingFraming { dropped.insert("content-length") }
        let fields = pairs(forwarded.fields)
        let kept = kept(response.fields, dropping: dropped)
        try check(Array(fields.prefix(kept.count)) == kept, "forwarded response fields are not the kept ones")
        try check(fields.count == kept.count + 2, "forwarded response adds \(fields.count - kept.count) fields")
    }
}
