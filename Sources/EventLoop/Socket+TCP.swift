import CSystem
import Glibc
import SystemIO

/// Which half of a TCP connection `shutdown` closes.
public enum ShutdownDirection: Sendable {
    /// No more reads (rarely useful).
    case read
    /// Sends a FIN after the queued bytes: the peer reads EOF but can still send to us.
    case write
    case both
}

/// TCP: listeners, non-blocking connects and stream reads and writes.
extension Socket {
    /// A listening TCP socket on `address` (SO_REUSEADDR always; port 0: the OS chooses, read
    /// it from `address`). `reusePort` lets each loop thread listen on the same port.
    public static func listen(
        on address: SocketAddress, backlog: Int32 = 1024, reusePort: Bool = false, ipv6Only: Bool = true
    ) throws(SystemError) -> Socket {
        let descriptor = try make(family: address.family, type: CS_SOCK_STREAM, subject: address)
        let socket = Socket(descriptor: descriptor, address: address)  // closes it if we throw
        try configureForBinding(
            descriptor, address: address, reuseAddress: true, reusePort: reusePort, ipv6Only: ipv6Only)
        _ = try systemCall("listen", subject: address.description) { Glibc.listen(descriptor, backlog) }
        return try socket.rebound()
    }

    /// Accepts one pending connection, non-blocking and close-on-exec; its `address` is the peer.
    /// - Returns: nil when none is pending (EAGAIN). Call again until nil: the listener is
    ///   level-triggered, so connections left pending wake the loop again anyway.
    /// - Throws: EMFILE/ENFILE (out of descriptors) and the like. Connections that failed
    ///   while queued (ECONNABORTED and the network errors accept(2) says to treat like
    ///   EAGAIN) are skipped.
    public func accept() throws(SystemError) -> Socket? {
        let descriptor = descriptor
        while true {
            var raw = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            do {
                guard
                    let accepted = try nonBlockingCall(
                        "accept4", subject: subject, { cs_accept4(descriptor, &raw, &length) })
                else { return nil }
                return Socket(descriptor: accepted, address: SocketAddress(raw, length: length))
            } catch  where Self.skippedAcceptErrors.contains(error.errno) {
                continue
            }
        }
    }

    /// Failures of one queued connection rather than of the listener (accept(2), "Error
    /// handling"): skip it and take the next.
    private static let skippedAcceptErrors: Set<Int32> = [
        ECONNABORTED, EPROTO, ENETDOWN, ENOPROTOOPT, EHOSTDOWN, ENONET, EHOSTUNREACH, EOPNOTSUPP, ENETUNREACH,
    ]

    /// Starts a non-blocking connect to `peer`. The result is known when the socket becomes
    /// writable: register it for `.write` and call `finishConnect()` then (also right when
    /// the connect finished at once, which the socket reports as writable immediately).
    /// - Throws: failures known at once (ECONNREFUSED often is, on loopback), subject the peer.
    public static func connect(to peer: SocketAddress) throws(SystemError) -> Socket {
        let descriptor = try make(family: peer.family, type: CS_SOCK_STREAM, subject: peer)
        let socket = Socket(descriptor: descriptor, address: peer)
        do {
            _ = try peer.withSockAddr { pointer, length throws(SystemError) in
                try nonBlockingCall("connect") { Glibc.connect(descriptor, pointer, length) }
            }
        } catch  where error.errno == EINPROGRESS || error.errno == EALREADY {
            // The usual outcome: the handshake goes on; EALREADY when EINTR made it ask twice.
        } catch {
            throw SystemError("connect", errno: error.errno, subject: peer.description)
        }
        return socket
    }

    /// The outcome of a `connect(to:)`, read from SO_ERROR once the socket is writable.
    /// - Throws: the connect's own failure as `SystemError("connect", errno, peer)`, e.g.
    ///   ECONNREFUSED, ETIMEDOUT, EHOSTUNREACH.
    public func finishConnect() throws(SystemError) {
        let code = try option(level: SOL_SOCKET, name: SO_ERROR, label: "getsockopt(SO_ERROR)")
        if code != 0 { throw SystemError("connect", errno: code, subject: subject) }
    }

    /// Reads what is available, at most `maxBytes`, appending to `buffer` (which grows by at
    /// most that much). `.eof` once the peer has shut down its write side and all was read.
    /// Consumed bytes keep their space until `discardReadBytes()` or `clear()`.
    /// - Throws: ECONNRESET and the like: the connection is dead, close it.
    public func read(into buffer: inout ByteBuffer, maxBytes: Int = 16_384) throws(SystemError) -> IOResult {
        let descriptor = descriptor
        var result = IOResult.wouldBlock
        try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: maxBytes) { space throws(SystemError) in
            let count = try nonBlockingCall("recv", subject: subject) {
                recv(descriptor, space.baseAddress, min(space.count, maxBytes), 0)
            }
            switch count {
            case nil: result = .wouldBlock
            case 0: result = .eof
            case let count?: result = .processed(count)
            }
            return count ?? 0
        }
        return result
    }

    /// Reads at most `maxBytes` through `scratch` (the loop's `readScratch`) and appends
    /// only what arrived: a connection that receives a byte holds a byte, not `maxBytes` of
    /// reserved room, however many connections sit idle with a partial message.
    public func read(
        into buffer: inout ByteBuffer, maxBytes: Int, through scratch: UnsafeMutableRawBufferPointer
    ) throws(SystemError) -> IOResult {
        let descriptor = descriptor
        let count = try nonBlockingCall("recv", subject: subject) {
            recv(descriptor, scratch.baseAddress, min(scratch.count, maxBytes), 0)
        }
        switch count {
        case nil: return .wouldBlock
        case 0: return .eof
        case let count?:
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
            return .processed(count)
        }
    }

    /// Writes as much of `buffer`'s readable bytes as the socket takes, consuming them.
    /// `.processed(n)` with n short of what was readable means the socket buffer is full:
    /// register for `.write` and write the rest when writable.
    /// - Throws: EPIPE/ECONNRESET when the peer is gone (never SIGPIPE: MSG_NOSIGNAL).
    public func write(from buffer: inout ByteBuffer) throws(SystemError) -> IOResult {
        guard buffer.readableBytes > 0 else { return .processed(0) }
        var result = IOResult.wouldBlock
        try buffer.readWithUnsafeReadableBytes { bytes throws(SystemError) in
            result = try write(bytes)
            if case .processed(let count) = result { return count }
            return 0
        }
        return result
    }

    /// Writes as much of `bytes` as the socket takes: `.processed(n)` or `.wouldBlock`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemError) -> IOResult {
        guard bytes.count > 0 else { return .processed(0) }
        let descriptor = descriptor
        let count = try nonBlockingCall("send", subject: subject) {
            Glibc.send(descriptor, bytes.baseAddress, bytes.count, CS_MSG_NOSIGNAL)
        }
        return count.map { .processed($0) } ?? .wouldBlock
    }

    /// Half-closes (`.write`: our FIN goes after the queued bytes) or fully closes the stream.
    /// - Throws: ENOTCONN when the peer already reset the connection.
    public func shutdown(_ direction: ShutdownDirection) throws(SystemError) {
        let how: Int32 =
            switch direction {
            case .read: Int32(SHUT_RD)
            case .write: Int32(SHUT_WR)
            case .both: Int32(SHUT_RDWR)
            }
        let descriptor = descriptor
        _ = try systemCall("shutdown", subject: subject) { Glibc.shutdown(descriptor, how) }
    }

    /// SO_LINGER with a zero timeout: closing then resets the connection and drops what is
    /// still queued to send, instead of delivering it before the FIN.
    public func resetOnClose() throws(SystemError) {
        var value = linger(l_onoff: 1, l_linger: 0)
        let descriptor = descriptor
        _ = try systemCall("setsockopt(SO_LINGER)", subject: subject) {
            Glibc.setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &value, socklen_t(MemoryLayout<linger>.size))
        }
    }

    /// Bytes written and not yet acknowledged by the peer (SIOCOUTQ): what the send buffer
    /// still holds for it.
    public func unsentBytes() throws(SystemError) -> Int {
        let descriptor = descriptor
        return Int(try systemCall("ioctl(SIOCOUTQ)", subject: subject) { cs_unsent_bytes(descriptor) })
    }

    /// SO_SNDBUF: the send buffer fixed at `bytes` of data (the kernel doubles the value for
    /// its bookkeeping), which also stops the kernel growing it on its own.
    public func setSendBuffer(_ bytes: Int) throws(SystemError) {
        try setOption(level: SOL_SOCKET, name: SO_SNDBUF, value: Int32(clamping: bytes), label: "setsockopt(SO_SNDBUF)")
    }

    /// TCP_NODELAY: send small writes at once instead of waiting to coalesce them (for
    /// request/response protocols such as DNS over TCP and proxied HTTP).
    public func setNoDelay(_ enabled: Bool = true) throws(SystemError) {
        try setOption(
            level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: enabled ? 1 : 0, label: "setsockopt(TCP_NODELAY)")
    }
}
