import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension TestHTTPServer {
    /// The listener and connection threads and what they share.
    final class Core: @unchecked Sendable {
        // Sendable: every stored property is a `let`; what changes lives in `state`, behind its lock.
        let port: UInt16
        let tls: TestTLSServerContext?
        let idleTimeout: Duration
        let handler: Handler
        let state = ServerState()

        init(port: UInt16, tls: TestTLSServerContext?, idleTimeout: Duration, handler: @escaping Handler) {
            self.port = port
            self.tls = tls
            self.idleTimeout = idleTimeout
            self.handler = handler
        }

        var isRunning: Bool { state.locked { $0.listener >= 0 } }

        func stop() {
            // Shut down under the lock: a connection closes its descriptor under it too, so a
            // number the kernel has handed out again is never touched.
            let listener = state.locked { state -> Int32 in
                let listener = state.listener
                state.listener = -1
                if listener >= 0 { Glibc.shutdown(listener, Int32(SHUT_RDWR)) }
                for descriptor in state.open { Glibc.shutdown(descriptor, Int32(SHUT_RDWR)) }
                return listener
            }
            state.threads.wait()
            if listener >= 0 { close(listener) }
        }

        func startAccepting(_ listener: Int32) {
            state.locked { $0.listener = listener }
            state.threads.enter()
            let thread = Thread { [self] in
                defer { state.threads.leave() }
                acceptLoop(listener)
            }
            thread.name = "test-http-accept"
            thread.start()
        }

        private func acceptLoop(_ listener: Int32) {
            while true {
                var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                let ready = poll(&entry, 1, 50)
                guard state.locked({ $0.listener == listener }) else { return }
                guard ready > 0 else { continue }
                let descriptor = accept(listener, nil, nil)
                guard descriptor >= 0 else { continue }
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
                let number: Int? = state.locked { state in
                    guard state.listener == listener else { return nil }
                    state.accepted += 1
                    state.open.insert(descriptor)
                    return state.accepted
                }
                guard let number else {
                    close(descriptor)
                    return
                }
                state.threads.enter()
                let thread = Thread { [self] in
                    defer { state.threads.leave() }
                    serve(descriptor, number: number)
                    state.locked { state in
                        state.open.remove(descriptor)
                        close(descriptor)
                    }
                }
                thread.name = "test-http-conn"
                thread.start()
            }
        }
    }
}

/// What the server's threads share, behind one lock.
final class ServerState: @unchecked Sendable {
    // Sendable: every field is read and written only while holding the lock.
    struct Fields {
        var listener: Int32 = -1
        var accepted = 0
        var open: Set<Int32> = []
    }

    private let lock = NSLock()
    private var fields = Fields()
    let threads = DispatchGroup()

    func locked<T>(_ body: (inout Fields) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&fields)
    }
}
