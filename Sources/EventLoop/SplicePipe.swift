import CSystem
import Glibc
import SystemIO

/// A kernel pipe that moves one direction of a TCP relay (the CONNECT tunnel) with
/// splice(2): socket → pipe (`fill`) and pipe → socket (`drain`), the bytes never copied
/// into user space. `buffered` counts what sits in the pipe, which the kernel cannot tell.
///
/// Driving it: fill until `.wouldBlock`, then drain. splice reports EAGAIN both when the
/// source is empty and when the pipe is full, so while `buffered > 0` after a drain that
/// would block, stop watching the source for reads (level-triggered readiness would spin)
/// and watch the destination for writes instead; resume reading once drained.
///
/// SIGPIPE: splice into a socket whose peer is gone raises SIGPIPE (there is no
/// MSG_NOSIGNAL for splice). Loop threads of an `EventLoopGroup` block it and the daemon
/// should ignore it (`Signals.ignoreBrokenPipe()`); the call then fails with EPIPE.
///
/// Loop-confined: used by the thread that owns both sockets (not `Sendable`).
public final class SplicePipe {
    private let readEnd: Int32
    private let writeEnd: Int32
    /// Bytes the pipe can hold (as granted by the kernel, page-rounded).
    public let capacity: Int
    /// Bytes filled in and not yet drained.
    public private(set) var buffered = 0

    /// - Parameter capacity: ask for this size (F_SETPIPE_SZ); nil keeps the kernel's default
    ///   (usually 64 KiB). Up to /proc/sys/fs/pipe-max-size (1 MiB) without privileges.
    public init(capacity: Int? = nil) throws(SystemError) {
        var pair: (Int32, Int32) = (-1, -1)
        _ = try withUnsafeMutableBytes(of: &pair) { raw throws(SystemError) in
            try systemCall("pipe2") { cs_pipe2(raw.baseAddress!.assumingMemoryBound(to: Int32.self)) }
        }
        let (readEnd, writeEnd) = pair
        let granted: Int32
        do {
            granted = try systemCall("fcntl(F_SETPIPE_SZ)") { cs_pipe_size(writeEnd, Int32(clamping: capacity ?? 0)) }
        } catch {
            _ = Glibc.close(readEnd)
            _ = Glibc.close(writeEnd)
            throw error
        }
        self.readEnd = readEnd
        self.writeEnd = writeEnd
        self.capacity = Int(granted)
    }

    deinit {
        _ = Glibc.close(readEnd)
        _ = Glibc.close(writeEnd)
    }

    public var isEmpty: Bool { buffered == 0 }
    public var isFull: Bool { buffered >= capacity }

    /// Moves what `source` has (at most the free space, or `maxBytes`) into the pipe.
    /// - Returns: `.processed(n)`, `.wouldBlock` (nothing to read, or the pipe is full), or
    ///   `.eof` when the source's peer has shut down its write side.
    public func fill(from source: Socket, maxBytes: Int = .max) throws(SystemError) -> IOResult {
        let room = min(capacity - buffered, maxBytes)
        guard room > 0 else { return .wouldBlock }
        let input = source.descriptor
        let writeEnd = writeEnd
        let moved = try nonBlockingCall("splice", subject: source.address?.description) {
            cs_splice(input, writeEnd, room, CS_SPLICE_F_MOVE | CS_SPLICE_F_NONBLOCK)
        }
        guard let moved else { return .wouldBlock }
        if moved == 0 { return .eof }
        buffered += moved
        return .processed(moved)
    }

    /// Moves buffered bytes from the pipe into `destination`.
    /// - Returns: `.processed(n)` or `.wouldBlock` (the destination's send buffer is full).
    /// - Throws: EPIPE/ECONNRESET when the destination's peer is gone.
    public func drain(to destination: Socket) throws(SystemError) -> IOResult {
        guard buffered > 0 else { return .processed(0) }
        let output = destination.descriptor
        let readEnd = readEnd
        let length = buffered
        let moved = try nonBlockingCall("splice", subject: destination.address?.description) {
            cs_splice(readEnd, output, length, CS_SPLICE_F_MOVE | CS_SPLICE_F_NONBLOCK)
        }
        guard let moved else { return .wouldBlock }
        buffered -= moved
        return .processed(moved)
    }
}
