import EventLoop
import SystemIO

/// The kernel pipes a loop's tunnels splice through. A direction of a tunnel borrows a
/// pipe only while bytes sit in it (its destination is full) and gives it back as soon as
/// it is empty, so a loop needs a handful of pipes however many tunnels are open, and
/// each can be large: 1 MiB (F_SETPIPE_SZ) halves the system calls of a bulk transfer
/// against the 64 KiB default. Pipe pages count against the user's
/// `fs.pipe-user-pages-soft`; when a large pipe is refused, the default size is used from
/// then on. Loop-confined; the spare list is bounded.
final class PipePool {
    private var spare: [SplicePipe] = []
    private var large = true
    static let limit = 32
    static let largeCapacity = 1 << 20

    func take() throws(SystemError) -> SplicePipe {
        if let pipe = spare.popLast() { return pipe }
        if large {
            do { return try SplicePipe(capacity: Self.largeCapacity) } catch { large = false }
        }
        return try SplicePipe()
    }

    /// Takes back an empty pipe (one with bytes left is dropped: they cannot be removed).
    func give(_ pipe: SplicePipe) {
        guard pipe.isEmpty, spare.count < Self.limit else { return }
        spare.append(pipe)
    }

    var spareCount: Int { spare.count }
}
