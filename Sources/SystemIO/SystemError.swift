import Glibc

/// A failed system call: which call, on what, and errno. Every module above reports
/// system failures through this one type (context is added at module boundaries).
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    public let call: String
    public let errno: Int32
    /// The path or address the call was about, when there is one.
    public let subject: String?

    public init(_ call: String, errno: Int32, subject: String? = nil) {
        self.call = call
        self.errno = errno
        self.subject = subject
    }

    /// The C library's text for errno, e.g. "No such file or directory".
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String {
        subject.map { "\(call)(\($0)): \(reason)" } ?? "\(call): \(reason)"
    }
}

/// Runs a system call, retrying on EINTR; a negative result becomes a `SystemError`.
/// `subject` is only evaluated on failure: formatting a socket's address for it (an
/// `inet_ntop`, which is a `sprintf`) cost every tunnel four of them on success.
@inline(__always)
public func systemCall<T: BinaryInteger>(
    _ name: String, subject: @autoclosure () -> String? = nil, _ body: () -> T
) throws(SystemError) -> T {
    while true {
        let result = body()
        if result >= 0 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        throw SystemError(name, errno: code, subject: subject())
    }
}
