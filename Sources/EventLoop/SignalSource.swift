import CSystem
import Glibc
import SystemIO

/// Delivers signals to a callback on one loop's thread, through a signalfd.
///
/// The signals must be blocked in every thread (see `Signals`); this type does not change
/// any mask. Several pending instances of one signal are merged by the kernel into one.
/// Loop-confined: create it and `cancel()` it on the loop's thread (or before it runs).
public final class SignalSource: Selectable {
    private let descriptor: Int32
    private let loop: EventLoop
    private let handler: (Int32) -> Void

    /// Starts delivering `signals` to `handler`, called on the loop's thread with the number.
    public init(loop: EventLoop, signals: [Int32], handler: @escaping (Int32) -> Void) throws(SystemError) {
        var set = Signals.set(of: signals)
        descriptor = try systemCall("signalfd") { cs_signalfd(&set) }
        self.loop = loop
        self.handler = handler
        // Fully initialised by now: if this throws, deinit closes the signalfd.
        try loop.register(descriptor, interest: .read, handler: self)
    }

    deinit { _ = Glibc.close(descriptor) }

    /// Stops delivering; the signals stay blocked (pending ones are left to the kernel).
    public func cancel() {
        try? loop.deregister(descriptor)
    }

    public func readable() {
        let descriptor = descriptor
        withUnsafeTemporaryAllocation(of: Int32.self, capacity: 8) { numbers in
            // nil: EAGAIN, nothing (more) pending.
            while let count = try? nonBlockingCall(
                "read(signalfd)", { cs_signalfd_read(descriptor, numbers.baseAddress, 8) }),
                count > 0
            {
                for number in numbers.prefix(Int(count)) { handler(number) }
            }
        }
    }

    public func writable() {}

    /// A signalfd does not hang up; nothing to do.
    public func hangup() {}
}
