import EventLoop
import SystemIO

/// The buffers a loop's tunnels relay through: one user-space buffer that small reads are
/// copied through, and the kernel pipes that bulk data is spliced through. A direction of
/// a tunnel borrows a pipe only while bytes sit in it (its destination is full) and gives
/// it back as soon as it is empty, so a loop needs a handful of pipes however many tunnels
/// are open, and each can be large: 1 MiB (F_SETPIPE_SZ) halves the system calls of a
/// bulk transfer against the 64 KiB default. Pipe pages count against the user's
/// `fs.pipe-user-pages-soft`; when a large pipe is refused, the default size is used from
/// then on. A pipe's pages exist only for the bytes in it: toward a device a splice takes
/// no more than its send buffer has room for, so one that stops reading holds about
/// 64 KiB of a pipe, not a megabyte. Loop-confined; the spare list is bounded.
final class RelayBuffers {
    /// The most one copied read takes; a read that fills it marks its direction as bulk.
    static let copyLimit = 16_384
    static let spareLimit = 32
    static let largePipe = 1 << 20
    /// The least one splice toward a device takes, however full its send buffer: what a
    /// pipe holds for a device that has stopped reading (`TunnelRelay.Direction.towardDevice`).
    static let leastFill = 65_536

    private var spare: [SplicePipe] = []
    private var large = true
    private var copyBuffer: ByteBuffer? = ByteBuffer(capacity: copyLimit)

    func takePipe() throws(SystemError) -> SplicePipe {
        if let pipe = spare.popLast() { return pipe }
        if large {
            do { return try SplicePipe(capacity: Self.largePipe) } catch { large = false }
        }
        return try SplicePipe()
    }

    /// Takes back an empty pipe (one with bytes left is dropped: they cannot be removed).
    func give(_ pipe: SplicePipe) {
        guard pipe.isEmpty, spare.count < Self.spareLimit else { return }
        spare.append(pipe)
    }

    var spareCount: Int { spare.count }

    /// The loop's copy buffer, empty; give it back when done (one relay step uses it at a time).
    func takeCopyBuffer() -> ByteBuffer {
        copyBuffer.take() ?? ByteBuffer(capacity: Self.copyLimit)
    }

    func give(_ buffer: ByteBuffer) {
        var buffer = buffer
        buffer.clear()
        copyBuffer = buffer
    }
}
