/// Which side of the decision a list feeds: it changes how an entry with a path is read.
public enum ListKind: Sendable {
    /// Block lists keep an entry's host even when it names one page (`youtube.com/watch?v=1`).
    case block
    /// Allow lists skip such an entry: allowing a whole site because of one page would
    /// open the site (docs/decisions.md#list-entries).
    case allow
}

/// One normalised list entry (docs/decisions.md#list-entries).
public enum ListEntry: Hashable, Sendable, CustomStringConvertible {
    case name(DomainName)
    /// An IPv4 or IPv6 literal, optionally written in brackets or with a port.
    case ip(IPAddress)

    public var description: String {
        switch self {
        case .name(let name): return name.description
        case .ip(let address): return address.description
        }
    }
}

/// Why an entry was skipped. Nothing in a list is ever fatal; every skip is counted.
public enum SkipReason: Error, Hashable, Sendable, CustomStringConvertible {
    case empty
    case invalid(NameError)
    case badPort
    case singleLabel
    case pathOnAllowList

    public var description: String {
        switch self {
        case .empty: return "empty entry"
        case .invalid(let error): return error.description
        case .badPort: return "port is not a number from 1 to 65535"
        case .singleLabel: return "single label (would cover a whole top-level domain)"
        case .pathOnAllowList: return "has a path or query (allowing one page would open the whole site)"
        }
    }
}

extension ListEntry {
    /// Normalises a raw entry: trim; IP literal (in brackets, with a port) → `.ip`;
    /// otherwise strip scheme, user info, port and one leading `*.` or `.`, then
    /// normalise as a query name. Paths and queries are kept as the host on block lists
    /// and skipped on allow lists; invalid and single-label entries are skipped.
    /// `allowSingleLabel` is for hosts that are not list entries (an API URL's `localhost`).
    public static func parse(
        _ raw: String, kind: ListKind, allowSingleLabel: Bool = false
    ) -> Result<ListEntry, SkipReason> {
        let text = raw.trimmingWhitespace()
        guard !text.isEmpty else { return .failure(.empty) }
        if let address = ipLiteral(text) { return .success(.ip(address)) }

        var rest = Substring(text)
        if let scheme = rest.firstRange(of: "://"), rest[..<scheme.lowerBound].allSatisfy(isSchemeCharacter) {
            rest = rest[scheme.upperBound...]
        }
        var hasPath = false
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            var tail = rest[end...]
            if let fragment = tail.firstIndex(of: "#") { tail = tail[..<fragment] }
            // A bare "/" names the site, not a page.
            hasPath = !(tail.isEmpty || tail == "/")
            rest = rest[..<end]
        }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if let address = ipLiteral(String(rest)) {
            return hasPath && kind == .allow ? .failure(.pathOnAllowList) : .success(.ip(address))
        }
        if let colon = rest.firstIndex(of: ":") {
            let port = rest[rest.index(after: colon)...]
            guard let number = Int(port), (1...65535).contains(number) else { return .failure(.badPort) }
            rest = rest[..<colon]
        }
        if rest.hasPrefix("*.") {
            rest = rest.dropFirst(2)
        } else if rest.hasPrefix(".") {
            rest = rest.dropFirst()
        }
        let name: DomainName
        do {
            name = try QueryName.parse(String(rest))
        } catch {
            return .failure(.invalid(error))
        }
        guard name.labelCount >= 2 || allowSingleLabel else { return .failure(.singleLabel) }
        if hasPath, kind == .allow { return .failure(.pathOnAllowList) }
        // A dotted quad that was not a literal as written (`1.2.3.4.`, `*.1.2.3.4`) is still
        // an address: an entry's text form must read back as the same entry.
        if case .v4(let address)? = IPAddress(name.description) { return .success(.ip(.v4(address))) }
        return .success(.name(name))
    }

    /// `1.2.3.4`, `1.2.3.4:443`, `::1`, `[::1]`, `[::1]:443`.
    static func ipLiteral(_ text: String) -> IPAddress? {
        if let address = IPAddress(text) { return address }
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let inside = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            guard after.isEmpty || isPortSuffix(after), case .v6? = IPAddress(inside) else { return nil }
            return IPAddress(inside)
        }
        if let colon = text.firstIndex(of: ":"), text[text.index(after: colon)...].firstIndex(of: ":") == nil,
            isPortSuffix(text[colon...]), case .v4? = IPAddress(text[..<colon])
        {
            return IPAddress(text[..<colon])
        }
        return nil
    }

    private static func isPortSuffix(_ text: Substring) -> Bool {
        guard text.first == ":", let port = Int(text.dropFirst()) else { return false }
        return (1...65535).contains(port)
    }

    private static func isSchemeCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "+.-".contains(character))
    }
}

extension StringProtocol {
    /// Trims ASCII white space and the Unicode spaces a pasted entry may carry.
    public func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        var result = ""
        result.unicodeScalars.append(contentsOf: scalars[first...last])
        return result
    }
}
