import Glibc

/// An IPv4 or IPv6 address with a port: what `bind`, `connect`, `accept` and `recvmmsg`
/// deal in. Holds the C `sockaddr_in`/`sockaddr_in6` inline, so making one from a received
/// datagram does not allocate. Printed as `127.0.0.1:5300` or `[::1]:53` (with `%scope`
/// for link-local addresses); parsed from the same text (see `SocketAddress+Parsing.swift`).
public struct SocketAddress: Sendable {
    public enum Family: Sendable, Equatable {
        case ipv4
        case ipv6
    }

    enum Storage {
        case v4(sockaddr_in)
        case v6(sockaddr_in6)
    }

    var storage: Storage

    init(_ address: sockaddr_in) { storage = .v4(address) }
    init(_ address: sockaddr_in6) { storage = .v6(address) }

    /// Reads what the kernel wrote into a `sockaddr_storage`; nil for any family but
    /// AF_INET/AF_INET6 or a length too short for it.
    public init?(_ raw: sockaddr_storage, length: socklen_t) {
        switch Int32(raw.ss_family) {
        case AF_INET where Int(length) >= MemoryLayout<sockaddr_in>.size:
            self.init(withUnsafeBytes(of: raw) { $0.loadUnaligned(as: sockaddr_in.self) })
        case AF_INET6 where Int(length) >= MemoryLayout<sockaddr_in6>.size:
            self.init(withUnsafeBytes(of: raw) { $0.loadUnaligned(as: sockaddr_in6.self) })
        default:
            return nil
        }
    }

    /// An IPv4 address from its 32 bits in host order (127.0.0.1 is 0x7f00_0001).
    public init(ipv4 bits: UInt32, port: UInt16) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = bits.bigEndian
        self.init(address)
    }

    /// An IPv6 address from its 128 bits in host order, split in two halves.
    public init(ipv6 high: UInt64, _ low: UInt64, port: UInt16, scopeID: UInt32 = 0) {
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        address.sin6_scope_id = scopeID
        withUnsafeMutableBytes(of: &address.sin6_addr) { bytes in
            bytes.storeBytes(of: high.bigEndian, as: UInt64.self)
            bytes.storeBytes(of: low.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        self.init(address)
    }

    public var family: Family {
        if case .v4 = storage { return .ipv4 }
        return .ipv6
    }

    public var port: UInt16 {
        switch storage {
        case .v4(let address): UInt16(bigEndian: address.sin_port)
        case .v6(let address): UInt16(bigEndian: address.sin6_port)
        }
    }

    /// The same address with another port (e.g. the OS-chosen one after binding port 0).
    public func withPort(_ port: UInt16) -> SocketAddress {
        var copy = self
        switch copy.storage {
        case .v4(var address):
            address.sin_port = port.bigEndian
            copy.storage = .v4(address)
        case .v6(var address):
            address.sin6_port = port.bigEndian
            copy.storage = .v6(address)
        }
        return copy
    }

    /// The IPv4 address in host order; nil for IPv6. For allow-list checks without strings.
    public var ipv4Bits: UInt32? {
        guard case .v4(let address) = storage else { return nil }
        return UInt32(bigEndian: address.sin_addr.s_addr)
    }

    /// The IPv6 address in host order as two halves; nil for IPv4.
    public var ipv6Bits: (high: UInt64, low: UInt64)? {
        guard case .v6(var address) = storage else { return nil }
        return withUnsafeBytes(of: &address.sin6_addr) { bytes in
            (
                UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)),
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
    }

    /// The interface index of a link-local IPv6 address (0 when none or IPv4).
    public var scopeID: UInt32 {
        guard case .v6(let address) = storage else { return 0 }
        return address.sin6_scope_id
    }

    /// Calls `body` with the C form and its length, for bind/connect/sendto.
    public func withSockAddr<R, E: Error>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(E) -> R) throws(E) -> R {
        switch storage {
        case .v4(var address):
            return try withUnsafeBytes(of: &address) { bytes throws(E) in
                try body(bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
            }
        case .v6(var address):
            return try withUnsafeBytes(of: &address) { bytes throws(E) in
                try body(bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
            }
        }
    }

    /// Copies the C form into `raw` (e.g. a sendmmsg slot) and returns its length.
    public func write(to raw: inout sockaddr_storage) -> socklen_t {
        withSockAddr { pointer, length in
            withUnsafeMutableBytes(of: &raw) {
                $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: Int(length)))
            }
            return length
        }
    }
}

extension SocketAddress: Hashable {
    /// Family, address bits, port and scope; other `sockaddr` padding is ignored.
    public static func == (lhs: SocketAddress, rhs: SocketAddress) -> Bool {
        lhs.port == rhs.port && lhs.ipv4Bits == rhs.ipv4Bits && lhs.scopeID == rhs.scopeID
            && lhs.ipv6Bits?.high == rhs.ipv6Bits?.high && lhs.ipv6Bits?.low == rhs.ipv6Bits?.low
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(port)
        hasher.combine(ipv4Bits)
        hasher.combine(ipv6Bits?.high)
        hasher.combine(ipv6Bits?.low)
        hasher.combine(scopeID)
    }
}
