/// Looking fields up by name (ASCII case ignored, RFC 9110 §5.1) and reading comma-separated
/// lists (RFC 9110 §5.6.1: members trimmed of white space, empty members skipped). The
/// `Bool` lookups compare bytes and allocate nothing: the proxy asks them for every request.
extension HeaderFields {
    public var count: Int { fields.count }

    /// Whether `field` is named `name`.
    public func isNamed(_ field: Field, _ name: String) -> Bool {
        equalsIgnoringCase(field.name, name)
    }

    /// Whether a field named `name` is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { isNamed($0, name) }
    }

    /// The value of the first field named `name`.
    public func first(_ name: String) -> String? {
        fields.first { isNamed($0, name) }.map(value)
    }

    /// Every value of the fields named `name`, in order.
    public func all(_ name: String) -> [String] {
        fields.filter { isNamed($0, name) }.map(value)
    }

    public func name(_ field: Field) -> String { String(decoding: bytes[field.name], as: UTF8.self) }

    public func value(_ field: Field) -> String { String(decoding: bytes[field.value], as: UTF8.self) }

    /// Every field as (name as sent, value), in order.
    public var pairs: [(String, String)] { fields.map { (name($0), value($0)) } }

    /// The members of every `name` list, lowercased (`Connection: close, Upgrade` →
    /// ["close", "upgrade"]).
    public func tokens(_ name: String) -> [String] {
        var tokens: [String] = []
        forEachMember(of: name) { member in
            tokens.append(String(decoding: bytes[member].map(HTTPSyntax.lower), as: UTF8.self))
            return true
        }
        return tokens
    }

    /// Whether some `name` list has the member `token` (`Connection: keep-alive, Close`
    /// has "close").
    public func containsToken(_ token: String, in name: String) -> Bool {
        var found = false
        forEachMember(of: name) { member in
            found = equalsIgnoringCase(member, token)
            return !found
        }
        return found
    }

    /// Whether `field`'s name is a member of some `list` field (`Connection: X-Private`
    /// lists the field X-Private as hop-by-hop, RFC 9110 §7.6.1).
    public func isListed(_ field: Field, in list: String) -> Bool {
        var found = false
        forEachMember(of: list) { member in
            found =
                member.count == field.name.count
                && zip(bytes[member], bytes[field.name]).allSatisfy { HTTPSyntax.lower($0) == HTTPSyntax.lower($1) }
            return !found
        }
        return found
    }

    /// Whether the value of some `name` field contains `needle`, ASCII case ignored.
    public func anyValue(of name: String, contains needle: String) -> Bool {
        let length = needle.utf8.count
        return fields.contains { field in
            guard isNamed(field, name), field.value.count >= length else { return false }
            var start = field.value.lowerBound
            while start + length <= field.value.upperBound {
                if equalsIgnoringCase(start..<start + length, needle) { return true }
                start += 1
            }
            return false
        }
    }

    /// Whether `Connection` (and the `extra` field, if any) lists `close`, and `keep-alive`
    /// (RFC 9112 §9.3), in one pass over the fields.
    func persistenceTokens(alsoIn extra: String?) -> (close: Bool, keepAlive: Bool) {
        var close = false
        var keepAlive = false
        for field in fields where isNamed(field, "connection") || extra.map({ isNamed(field, $0) }) == true {
            forEachMember(of: field) { member in
                if equalsIgnoringCase(member, "close") { close = true }
                if equalsIgnoringCase(member, "keep-alive") { keepAlive = true }
                return true
            }
        }
        return (close, keepAlive)
    }

    /// Calls `body` with each non-empty member of every `name` list, trimmed, until it
    /// returns false. Quoted strings are not special (no list the parsers read has them).
    func forEachMember(of name: String, _ body: (Range<Int>) -> Bool) {
        for field in fields where isNamed(field, name) {
            guard forEachMember(of: field, body) else { return }
        }
    }

    /// As above for one field; false when `body` asked to stop. `includeEmpty` hands empty
    /// members (`5,,5`) to `body` too, as empty ranges, for fields where one is an error.
    @discardableResult
    func forEachMember(of field: Field, includeEmpty: Bool = false, _ body: (Range<Int>) -> Bool) -> Bool {
        var start = field.value.lowerBound
        while start <= field.value.upperBound {
            var end = start
            while end < field.value.upperBound, bytes[end] != UInt8(ascii: ",") { end += 1 }
            var low = start
            var high = end
            while low < high, HTTPSyntax.isWhitespace(bytes[low]) { low += 1 }
            while high > low, HTTPSyntax.isWhitespace(bytes[high - 1]) { high -= 1 }
            if low < high || includeEmpty, !body(low..<high) { return false }
            start = end + 1
        }
        return true
    }

    /// Whether the bytes in `range` spell `text`, ASCII case ignored. Asked for every field
    /// of every request the proxy reads, so it compares through pointers: `text` is a
    /// literal almost always, whose UTF-8 is contiguous.
    func equalsIgnoringCase(_ range: Range<Int>, _ text: String) -> Bool {
        let utf8 = text.utf8
        guard range.count == utf8.count else { return false }
        let equal = utf8.withContiguousStorageIfAvailable { name in
            bytes.withUnsafeBufferPointer { raw in
                var index = range.lowerBound
                for byte in name {
                    guard HTTPSyntax.lower(raw[index]) == HTTPSyntax.lower(byte) else { return false }
                    index += 1
                }
                return true
            }
        }
        if let equal { return equal }
        return zip(bytes[range], utf8).allSatisfy { HTTPSyntax.lower($0) == HTTPSyntax.lower($1) }
    }
}
