import Glibc

/// Runs a system call on a non-blocking descriptor: EINTR is retried, EAGAIN (equal to
/// EWOULDBLOCK on Linux) becomes `nil` — not an error, the caller waits for readiness —
/// and any other failure a `SystemError` naming the call and errno.
///
/// `subject` is only evaluated on failure, so the hot path never formats an address.
@inline(__always)
public func nonBlockingCall<T: BinaryInteger>(
    _ name: String, subject: @autoclosure () -> String? = nil, _ body: () -> T
) throws(SystemError) -> T? {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        if code == EAGAIN { return nil }
        throw SystemError(name, errno: code, subject: subject())
    }
}
