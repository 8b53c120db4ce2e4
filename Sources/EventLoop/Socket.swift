import CSystem
import Glibc
import Synchronization
import SystemIO

/// What a non-blocking read or write did. Failures are thrown as `SystemError`; these are
/// the outcomes that are not failures.
public enum IOResult: Equatable, Sendable {
    /// This many bytes moved (for a write, possibly fewer than offered: write the rest
    /// when the socket is writable again).
    case processed(Int)
    /// EAGAIN: nothing moved; wait for readiness.
    case wouldBlock
    /// The peer will send no more (a read returned 0 after a FIN or the end of the input).
    case eof
}

/// A non-blocking, close-on-exec socket descriptor: UDP (`Socket+UDP.swift`), TCP
/// (`Socket+TCP.swift`). Every call goes through `systemCall`/`nonBlockingCall`, so EINTR is
/// retried, EAGAIN is `.wouldBlock` (or `nil`) and any other failure a `SystemError` whose
/// subject is `address`.
///
/// Ownership: one thread at a time uses a socket (normally the loop it is registered on);
/// hand it to another thread only together with everything else about the connection. The
/// descriptor is closed exactly once — by the first `close()` or else when the last
/// reference goes. It is atomic so that a second `close()`, even from another thread, can
/// never close a number the kernel has since given to someone else. Deregister it from its
/// loop before closing.
public final class Socket: Sendable, CustomStringConvertible {
    private let fd: Atomic<Int32>
    /// Bound address (listeners, UDP) or peer (connected and accepted streams); names the
    /// subject of errors and costs nothing until one happens.
    public let address: SocketAddress?

    /// Takes ownership of `descriptor`, which must already be non-blocking.
    public init(descriptor: Int32, address: SocketAddress?) {
        fd = Atomic(descriptor)
        self.address = address
    }

    deinit { close() }

    /// The descriptor, or -1 once closed. For registering with an `EventLoop`.
    public var descriptor: Int32 { fd.load(ordering: .relaxed) }

    public var isOpen: Bool { descriptor >= 0 }

    public var description: String { "Socket(fd: \(descriptor), \(address?.description ?? "-"))" }

    var subject: String? { address?.description }

    /// Closes the descriptor; later calls do nothing. Not retried on EINTR and not
    /// reported: on Linux the descriptor is gone even then, and retrying could close a
    /// descriptor another thread was just given.
    public func close() {
        let old = fd.exchange(-1, ordering: .acquiringAndReleasing)
        if old >= 0 { _ = Glibc.close(old) }
    }

    /// The same descriptor under a new `Socket` whose `address` is the bound one (with the
    /// port the OS chose for port 0); this object gives it up.
    func rebound() throws(SystemError) -> Socket {
        let local = try localAddress()
        return Socket(descriptor: fd.exchange(-1, ordering: .acquiringAndReleasing), address: local)
    }

    /// Creates a non-blocking, close-on-exec socket of `type` (CS_SOCK_STREAM/DGRAM).
    static func make(family: SocketAddress.Family, type: Int32, subject: SocketAddress) throws(SystemError) -> Int32 {
        let domain = family == .ipv4 ? AF_INET : AF_INET6
        return try systemCall("socket", subject: subject.description) { cs_socket(domain, type) }
    }

    /// Options every bound socket of ours shares, applied between socket() and bind().
    static func configureForBinding(
        _ descriptor: Int32, address: SocketAddress, reuseAddress: Bool, reusePort: Bool, ipv6Only: Bool
    ) throws(SystemError) {
        let subject = address.description
        if reuseAddress {
            // Lets a restarted daemon bind while old connections sit in TIME_WAIT.
            _ = try systemCall("setsockopt(SO_REUSEADDR)", subject: subject) {
                cs_setsockopt_int(descriptor, SOL_SOCKET, SO_REUSEADDR, 1)
            }
        }
        if reusePort {
            _ = try systemCall("setsockopt(SO_REUSEPORT)", subject: subject) {
                cs_setsockopt_int(descriptor, SOL_SOCKET, CS_SO_REUSEPORT, 1)
            }
        }
        if address.family == .ipv6 {
            // Explicit either way: the sysctl default (bindv6only) differs between systems.
            _ = try systemCall("setsockopt(IPV6_V6ONLY)", subject: subject) {
                cs_setsockopt_int(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, ipv6Only ? 1 : 0)
            }
        }
        _ = try address.withSockAddr { pointer, length throws(SystemError) in
            try systemCall("bind", subject: subject) { bind(descriptor, pointer, length) }
        }
    }

    /// The local address (after binding port 0, this holds the port the OS chose).
    public func localAddress() throws(SystemError) -> SocketAddress {
        var raw = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let descriptor = descriptor
        _ = try withUnsafeMutablePointer(to: &raw) { pointer throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(SystemError) in
                try systemCall("getsockname", subject: subject) { getsockname(descriptor, address, &length) }
            }
        }
        guard let address = SocketAddress(raw, length: length) else {
            throw SystemError("getsockname", errno: EAFNOSUPPORT, subject: subject)
        }
        return address
    }

    /// Where an accepted connection was going before the firewall redirected it to this
    /// listener (netfilter's `SO_ORIGINAL_DST`, and `IP6T_SO_ORIGINAL_DST` for IPv6, both
    /// option 80: linux/netfilter_ipv4.h, linux/netfilter_ipv6/ip6_tables.h). Nil for a
    /// connection that was not redirected (conntrack has no NAT entry for it).
    public func originalDestination() -> SocketAddress? {
        let originalDestinationOption: Int32 = 80
        guard let local = try? localAddress() else { return nil }
        var raw = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let level = local.family == .ipv6 ? Int32(IPPROTO_IPV6) : Int32(IPPROTO_IP)
        let result = withUnsafeMutablePointer(to: &raw) { pointer in
            getsockopt(descriptor, level, originalDestinationOption, pointer, &length)
        }
        guard result == 0 else { return nil }
        return SocketAddress(raw, length: length)
    }

    /// Sets an `int` socket option, e.g. `(SOL_SOCKET, SO_RCVBUF, 1 << 20)`.
    public func setOption(level: Int32, name: Int32, value: Int32, label: String = "setsockopt") throws(SystemError) {
        let descriptor = descriptor
        _ = try systemCall(label, subject: subject) { cs_setsockopt_int(descriptor, level, name, value) }
    }

    /// Reads an `int` socket option.
    public func option(level: Int32, name: Int32, label: String = "getsockopt") throws(SystemError) -> Int32 {
        var value: Int32 = 0
        let descriptor = descriptor
        _ = try systemCall(label, subject: subject) { cs_getsockopt_int(descriptor, level, name, &value) }
        return value
    }

    /// Kernel buffer sizes (the kernel doubles what is asked, for its bookkeeping).
    public func setBufferSizes(send: Int32? = nil, receive: Int32? = nil) throws(SystemError) {
        if let send { try setOption(level: SOL_SOCKET, name: SO_SNDBUF, value: send, label: "setsockopt(SO_SNDBUF)") }
        if let receive {
            try setOption(level: SOL_SOCKET, name: SO_RCVBUF, value: receive, label: "setsockopt(SO_RCVBUF)")
        }
    }
}
