import CSystem
import Glibc
import SystemIO

/// The interface a datagram or a connection arrived on, read from the control messages the
/// kernel gives with it: `IP_PKTINFO` (an `in_pktinfo`, whose first field is the
/// interface index) and `IPV6_PKTINFO` (RFC 3542 §6.1: an `in6_pktinfo`, the address and
/// then the index), or its RFC 2292 twin, which a TCP socket's `IPV6_2292PKTOPTIONS`
/// returns. Nothing else is read. Allocation-free: one walk over the bytes in place.
public enum ControlMessages {
    /// What `CMSG_ALIGN` rounds to: the size of `size_t`.
    static let alignment = MemoryLayout<Int>.size
    /// The header before each message's data: `CMSG_LEN(0)`.
    static let headerSize = aligned(MemoryLayout<cmsghdr>.size)
    static let levelOffset = MemoryLayout<cmsghdr>.offset(of: \.cmsg_level)!
    static let typeOffset = MemoryLayout<cmsghdr>.offset(of: \.cmsg_type)!
    /// `in_pktinfo`: ipi_ifindex (int), ipi_spec_dst, ipi_addr.
    static let pktinfoSize = 12
    /// `in6_pktinfo`: ipi6_addr (16 bytes), ipi6_ifindex (unsigned int).
    static let pktinfo6Size = 20
    static let pktinfo6IndexOffset = 16

    /// The arrival interface's index in `control` (the control bytes of one `recvmsg`, or
    /// what `getsockopt(IP_PKTOPTIONS)` filled in), or nil when no packet-information
    /// message is there, its index is 0, or a header would run past the end (a buffer the
    /// kernel cut, `MSG_CTRUNC`, is read as far as it is whole).
    public static func arrivalInterface(in control: UnsafeRawBufferPointer) -> UInt32? {
        var offset = 0
        while control.count - offset >= headerSize {
            let length = control.loadUnaligned(fromByteOffset: offset, as: Int.self)
            guard length >= headerSize, length <= control.count - offset else { return nil }
            let level = control.loadUnaligned(fromByteOffset: offset + levelOffset, as: Int32.self)
            let type = control.loadUnaligned(fromByteOffset: offset + typeOffset, as: Int32.self)
            let data = offset + headerSize
            let dataLength = length - headerSize
            var index: UInt32?
            if level == CS_IPPROTO_IP, type == CS_IP_PKTINFO, dataLength >= pktinfoSize {
                index = control.loadUnaligned(fromByteOffset: data, as: UInt32.self)
            } else if level == CS_IPPROTO_IPV6, type == CS_IPV6_PKTINFO || type == CS_IPV6_2292PKTINFO,
                dataLength >= pktinfo6Size
            {
                index = control.loadUnaligned(fromByteOffset: data + pktinfo6IndexOffset, as: UInt32.self)
            }
            if let index { return index == 0 ? nil : index }
            offset += aligned(length)
        }
        return nil
    }

    static func aligned(_ length: Int) -> Int { (length + alignment - 1) & ~(alignment - 1) }
}

extension Socket {
    /// Asks the kernel for the arrival interface: with each datagram of a UDP socket (read
    /// it with `DatagramBatch.arrivalInterface(at:)`), and, set on a listener, for each
    /// connection it accepts (`arrivalInterface()`). An IPv6 socket asks for both families'
    /// messages, so IPv4-mapped traffic on a dual-stack socket has one too.
    public func reportArrivalInterface() throws(SystemError) {
        if address?.family == .ipv6 {
            try setOption(
                level: CS_IPPROTO_IPV6, name: CS_IPV6_RECVPKTINFO, value: 1, label: "setsockopt(IPV6_RECVPKTINFO)")
        }
        try setOption(level: CS_IPPROTO_IP, name: CS_IP_PKTINFO, value: 1, label: "setsockopt(IP_PKTINFO)")
    }

    /// The interface an accepted TCP connection came in on (the last packet of its
    /// handshake for IPv4, its SYN for IPv6), when its listener called
    /// `reportArrivalInterface()` before the connection arrived; nil when the kernel does
    /// not say. One `getsockopt`.
    public func arrivalInterface() -> UInt32? {
        let descriptor = descriptor
        // An IPv4-mapped peer came over IPv4, whose path keeps the IPv4 option's answer.
        let ipv6 = address?.ipv6Bits.map { $0.high != 0 || $0.low >> 32 != 0xFFFF } ?? false
        let level = ipv6 ? CS_IPPROTO_IPV6 : CS_IPPROTO_IP
        let name = ipv6 ? CS_IPV6_2292PKTOPTIONS : CS_IP_PKTOPTIONS
        return withUnsafeTemporaryAllocation(byteCount: Int(CS_CONTROL_SIZE), alignment: ControlMessages.alignment) {
            space in
            var length = socklen_t(space.count)
            guard getsockopt(descriptor, level, name, space.baseAddress, &length) == 0 else { return nil }
            return ControlMessages.arrivalInterface(in: UnsafeRawBufferPointer(rebasing: space[..<Int(length)]))
        }
    }
}
