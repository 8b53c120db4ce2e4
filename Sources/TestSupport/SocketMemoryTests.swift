import Foundation

/// Tests that measure what the kernel holds for sockets (the bytes buffered for a device
/// that stopped reading, the memory of hundreds of stalled connections) run one at a time:
/// side by side, one's stalled connections put the kernel's TCP memory under pressure and
/// change what the other measures. Only for `.blocking` tests, which have threads of
/// their own to wait on.
public enum SocketMemoryTests {
    private static let lock = NSLock()

    public static func exclusively<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
