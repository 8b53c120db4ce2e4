/// Something registered with an `EventLoop` for readiness of one file descriptor: a
/// socket handler, the loop's own wake-up eventfd, a signalfd.
///
/// Contract: every method is called on the loop's thread, only while the registration that
/// asked for it is current (after `deregister`, or a re-registration of the same descriptor
/// number, no stale event reaches the handler). The loop holds a strong reference to the
/// handler from `register` to `deregister`, and also for the duration of each call, so a
/// handler may deregister (and drop its last reference) from inside a callback.
///
/// Readiness is level-triggered: a handler that neither consumes the input nor removes
/// `.read` from its interest is called again at once. A class-bound protocol, so the loop
/// stores and calls it without boxing.
public protocol Selectable: AnyObject {
    /// Input is waiting, or the peer shut down its write side (a read returns EOF).
    /// Only while the interest includes `.read`.
    func readable()
    /// There is room to write, or a non-blocking connect finished (check `finishConnect()`).
    /// Only while the interest includes `.write`.
    func writable()
    /// EPOLLHUP or EPOLLERR: the connection is gone or has a pending error, whatever the
    /// interest. Called after `readable`/`writable` for the same wake-up, if still
    /// registered. Must end the registration (deregister and close) or read the error and
    /// recover; ignoring it makes the loop spin.
    func hangup()
}

/// Which readiness a registration wants reported. Hang-ups and errors are always reported.
public struct Interest: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let read = Interest(rawValue: 1)
    public static let write = Interest(rawValue: 2)
    public static let both: Interest = [.read, .write]
    /// Neither: the registration stays (hang-ups still arrive) but input and output pause.
    public static let none: Interest = []
}
