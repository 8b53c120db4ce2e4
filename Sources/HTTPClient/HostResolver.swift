import EventLoop
import Glibc
import SystemIO

/// Turns a URL's host into addresses to connect to. `.system` asks getaddrinfo (blocking:
/// the client runs on a thread of its own); IP literals never reach a resolver. Injected,
/// so tests can reach a server under a certificate's name (`.fixed(["dot.test": ["127.0.0.1"]])`,
/// like curl's `--resolve`).
public struct HostResolver: Sendable {
    let lookup: @Sendable (_ host: String, _ port: UInt16) throws(HTTPError) -> [SocketAddress]

    public init(_ lookup: @escaping @Sendable (_ host: String, _ port: UInt16) throws(HTTPError) -> [SocketAddress]) {
        self.lookup = lookup
    }

    /// getaddrinfo(3) for TCP, IPv6 and IPv4 in the order the system prefers (gai.conf),
    /// duplicates removed. No AI_ADDRCONFIG: it hides 127.0.0.1 on a host whose only
    /// IPv4 address is loopback.
    public static let system = HostResolver { host, port throws(HTTPError) in
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, nil, &hints, &list)
        guard code == 0 else {
            let reason = code == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(code))
            throw .resolve(host: host, reason: reason)
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var entry = list
        while let current = entry {
            if let raw = current.pointee.ai_addr {
                var storage = sockaddr_storage()
                let length = min(Int(current.pointee.ai_addrlen), MemoryLayout<sockaddr_storage>.size)
                withUnsafeMutableBytes(of: &storage) {
                    $0.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: length))
                }
                if let address = SocketAddress(storage, length: socklen_t(length))?.withPort(port),
                    !addresses.contains(address)
                {
                    addresses.append(address)
                }
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw .resolve(host: host, reason: "no IPv4 or IPv6 address") }
        return addresses
    }

    /// Names answered from `table` (name → IP literals), the rest refused. For tests.
    public static func fixed(_ table: [String: [String]]) -> HostResolver {
        HostResolver { host, port throws(HTTPError) in
            let literals = table[host] ?? []
            var addresses: [SocketAddress] = []
            for literal in literals {
                guard let address = try? SocketAddress(host: literal, port: port) else {
                    throw .resolve(host: host, reason: "\"\(literal)\" is not an IP address")
                }
                addresses.append(address)
            }
            guard !addresses.isEmpty else { throw .resolve(host: host, reason: "not in the fixed table") }
            return addresses
        }
    }

    /// The addresses for `url`: its IP literal directly, else the lookup's.
    func addresses(for url: HTTPURL) throws(HTTPError) -> [SocketAddress] {
        if url.isIPLiteral {
            guard let address = try? SocketAddress(host: url.host, port: url.port) else {
                throw .invalidURL("\"\(url)\": not an IP address")
            }
            return [address]
        }
        return try lookup(url.host, url.port)
    }
}
