import EventLoop
import Synchronization
import SystemIO

/// Keep-alive: at most one idle connection per (scheme, host, port), checked before reuse.
extension HTTPClient {
    /// The kept connection for `key` if it is still fresh and open; stale ones are closed.
    func takeIdle(_ key: PoolKey) -> Connection? {
        guard let connection = idle.withLock({ $0.removeValue(forKey: key) }) else { return nil }
        let age = clock.now() &- connection.lastUsed
        guard age < idleTimeout.nanoseconds, connection.transport.isIdleAndOpen() else {
            connection.transport.close()
            return nil
        }
        connection.reused = true
        return connection
    }

    func putIdle(_ connection: Connection) {
        connection.lastUsed = clock.now()
        let replaced = idle.withLock { $0.updateValue(connection, forKey: connection.key) }
        replaced?.transport.close()
    }
}

/// Where a connection goes: one kept connection per (scheme, host, port).
struct PoolKey: Hashable {
    let scheme: HTTPURL.Scheme
    let host: String
    let port: UInt16

    init(_ url: HTTPURL) {
        scheme = url.scheme
        host = url.host
        port = url.port
    }
}

/// One open connection and the bytes read past the last response. Owned by one `send` at
/// a time (taken out of the pool, put back when done), hence `@unchecked Sendable`.
final class Connection: @unchecked Sendable {
    let key: PoolKey
    let transport: Transport
    var buffer = ByteBuffer(capacity: 16_384)
    /// Served a request before (a failure may then mean it had gone stale).
    var reused = false
    var lastUsed: Nanoseconds = 0

    init(key: PoolKey, transport: Transport) {
        self.key = key
        self.transport = transport
    }
}
