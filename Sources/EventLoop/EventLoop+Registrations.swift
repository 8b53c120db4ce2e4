import CSystem
import Glibc
import SystemIO

/// Registrations: which descriptors the loop watches, for what, and who hears about it.
/// Loop-confined (see `EventLoop`). The epoll data word carries the descriptor and a
/// generation number, so an event collected for a registration that has since ended (or
/// been replaced by a new one on a reused descriptor number) is recognised and dropped.
extension EventLoop {
    /// Watches `descriptor` for `interest`, reporting to `handler` (held strongly until
    /// `deregister`). Loop thread. Throws EEXIST if the descriptor is already registered.
    public func register(_ descriptor: Int32, interest: Interest, handler: any Selectable) throws(SystemError) {
        assertInLoop()
        precondition(descriptor >= 0, "EventLoop.register: closed descriptor")
        let index = Int(descriptor)
        if index < registrations.count, registrations[index] != nil {
            throw SystemError("epoll_ctl(ADD)", errno: EEXIST, subject: "fd \(descriptor)")
        }
        generation &+= 1
        let data = UInt64(generation) << 32 | UInt64(UInt32(bitPattern: descriptor))
        try control("epoll_ctl(ADD)", CS_EPOLL_CTL_ADD, descriptor, Self.mask(interest), data)
        if index >= registrations.count {
            registrations.append(contentsOf: repeatElement(nil, count: index + 1 - registrations.count))
        }
        registrations[index] = Registration(handler: handler, generation: generation, interest: interest)
    }

    /// Changes what `descriptor` is watched for; no system call when nothing changes. Loop thread.
    public func setInterest(_ interest: Interest, for descriptor: Int32) throws(SystemError) {
        assertInLoop()
        let index = Int(descriptor)
        guard descriptor >= 0, index < registrations.count, let registration = registrations[index] else {
            throw SystemError("epoll_ctl(MOD)", errno: ENOENT, subject: "fd \(descriptor)")
        }
        guard registration.interest != interest else { return }
        let data = UInt64(registration.generation) << 32 | UInt64(UInt32(bitPattern: descriptor))
        try control("epoll_ctl(MOD)", CS_EPOLL_CTL_MOD, descriptor, Self.mask(interest), data)
        registrations[index]!.interest = interest
    }

    /// The current interest of `descriptor`, nil when not registered. Loop thread.
    public func interest(for descriptor: Int32) -> Interest? {
        assertInLoop()
        guard descriptor >= 0, Int(descriptor) < registrations.count else { return nil }
        return registrations[Int(descriptor)]?.interest
    }

    /// Stops watching `descriptor` and releases its handler; call before closing it.
    /// Events already collected for it in this iteration are dropped. Loop thread.
    public func deregister(_ descriptor: Int32) throws(SystemError) {
        guard dropRegistration(descriptor) else {
            throw SystemError("epoll_ctl(DEL)", errno: ENOENT, subject: "fd \(descriptor)")
        }
        try control("epoll_ctl(DEL)", CS_EPOLL_CTL_DEL, descriptor, 0, 0)
    }

    /// Stops watching `descriptor` without a system call, for a caller that closes it next
    /// (a connection's teardown: two `epoll_ctl(DEL)` a tunnel saved). Closing removes it
    /// from the epoll set, as no other descriptor refers to its socket; should one do so for
    /// a moment (a child forked and not yet exec'd), what epoll still reports for it carries
    /// the ended registration's generation and is dropped, as after `deregister`. Releases the
    /// handler; a descriptor not registered is ignored. Loop thread.
    public func forget(_ descriptor: Int32) {
        _ = dropRegistration(descriptor)
    }

    /// Drops `descriptor`'s registration and releases its handler; false when it had none.
    private func dropRegistration(_ descriptor: Int32) -> Bool {
        assertInLoop()
        let index = Int(descriptor)
        guard descriptor >= 0, index < registrations.count, registrations[index] != nil else { return false }
        let released = registrations[index]
        registrations[index] = nil
        // The handler's deinit (if this was the last reference) runs after the store above.
        withExtendedLifetime(released) {}
        return true
    }

    private func control(
        _ call: String, _ operation: Int32, _ descriptor: Int32, _ mask: UInt32, _ data: UInt64
    )
        throws(SystemError)
    {
        // epoll_ctl never fails with EINTR or EAGAIN; the subject is formatted only on failure.
        controlCalls &+= 1
        if cs_epoll_ctl(epoll, operation, descriptor, mask, data) < 0 {
            throw SystemError(call, errno: errno, subject: "fd \(descriptor)")
        }
    }

    static func mask(_ interest: Interest) -> UInt32 {
        (interest.contains(.read) ? CS_EPOLLIN | CS_EPOLLRDHUP : 0) | (interest.contains(.write) ? CS_EPOLLOUT : 0)
    }
}
