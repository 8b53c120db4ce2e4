import EventLoop
import Glibc
import SystemIO
import TLS

/// One connection's byte stream, plain TCP or TLS over it, with blocking semantics: every
/// call waits (poll) on the non-blocking socket until it is done or its deadline passes.
/// Used by one thread at a time (the one holding the connection).
final class Transport {
    /// How a read ended when it brought no data.
    enum ReadOutcome: Equatable {
        case data
        /// The peer ended the stream: `clean` for TCP's FIN or TLS close_notify; false
        /// when a TLS peer closed the transport without close_notify.
        case endOfStream(clean: Bool)
    }

    let socket: Socket
    let tls: TLSConnection?

    init(socket: Socket, tls: TLSConnection?) {
        self.socket = socket
        self.tls = tls
    }

    /// Connects to the first address that accepts, in order, within `deadline`.
    /// - Throws: `.connect` with the last address's failure, `.timeout(.connect)`.
    static func connect(to addresses: [SocketAddress], deadline: Deadline) throws(HTTPError) -> Socket {
        var lastFailure = HTTPError.closed
        for address in addresses {
            let socket: Socket
            do {
                socket = try Socket.connect(to: address)
            } catch {
                lastFailure = .connect(error)
                continue
            }
            try waitFor(socket, Int16(POLLOUT), until: deadline, phase: .connect)
            do {
                try socket.finishConnect()
            } catch {
                socket.close()
                lastFailure = .connect(error)
                continue
            }
            try? socket.setNoDelay()  // a request is one write; send it now
            return socket
        }
        throw lastFailure
    }

    /// Runs the TLS handshake (a no-op for plain TCP).
    func handshake(until deadline: Deadline) throws(HTTPError) {
        guard let tls else { return }
        while true {
            let result: TLSResult
            do { result = try tls.handshake() } catch { throw Self.mapped(error) }
            try flush(until: deadline, phase: .tlsHandshake)
            switch result {
            case .processed, .closed: return
            case .wantWrite: continue
            case .wantRead: try receive(until: deadline, phase: .tlsHandshake)
            }
        }
    }

    /// Sends all of `bytes`.
    func write(_ bytes: [UInt8], until deadline: Deadline) throws(HTTPError) {
        var offset = 0
        while offset < bytes.count {
            if let tls {
                var failure: TLSError?
                let result = bytes.withUnsafeBytes { all -> TLSResult in
                    do throws(TLSError) {
                        return try tls.write(UnsafeRawBufferPointer(rebasing: all[offset...]))
                    } catch {
                        failure = error
                        return .processed(0)
                    }
                }
                if let failure { throw Self.mapped(failure) }
                switch result {
                case .processed(let count): offset += count
                case .wantWrite: break
                case .wantRead: try receive(until: deadline, phase: .send)
                case .closed: throw .closed
                }
                try flush(until: deadline, phase: .send)
            } else {
                var failure: SystemError?
                let result = bytes.withUnsafeBytes { all -> IOResult in
                    do throws(SystemError) {
                        return try socket.write(UnsafeRawBufferPointer(rebasing: all[offset...]))
                    } catch {
                        failure = error
                        return .processed(0)
                    }
                }
                if let failure { throw .io(failure) }
                switch result {
                case .processed(let count): offset += count
                case .wouldBlock, .eof: try waitFor(socket, Int16(POLLOUT), until: deadline, phase: .send)
                }
            }
        }
    }

    /// Appends what arrives (at least one byte) to `buffer`, or says how the stream ended.
    func read(into buffer: inout ByteBuffer, until deadline: Deadline) throws(HTTPError) -> ReadOutcome {
        guard let tls else {
            while true {
                let result: IOResult
                do { result = try socket.read(into: &buffer) } catch { throw .io(error) }
                switch result {
                case .processed(let count) where count > 0: return .data
                case .processed, .eof: return .endOfStream(clean: true)
                case .wouldBlock: try waitFor(socket, Int16(POLLIN), until: deadline, phase: .response)
                }
            }
        }
        while true {
            let result: TLSResult
            do {
                result = try tls.read(into: &buffer)
            } catch .peerClosed {
                return .endOfStream(clean: false)
            } catch {
                throw Self.mapped(error)
            }
            switch result {
            case .processed(let count) where count > 0: return .data
            case .processed: continue
            case .closed: return .endOfStream(clean: true)
            case .wantWrite: try flush(until: deadline, phase: .response)
            case .wantRead:
                try flush(until: deadline, phase: .response)
                try receive(until: deadline, phase: .response)
            }
        }
    }

    /// True when an idle connection still looks usable: nothing arrived on it (no FIN, no
    /// stray bytes). Over TLS, records that carry no data (a late session ticket) are
    /// taken in and do not count.
    func isIdleAndOpen() -> Bool {
        guard socket.isOpen else { return false }
        var entry = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&entry, 1, 0)
        guard ready > 0 else { return ready == 0 }
        guard let tls, entry.revents & Int16(POLLIN) != 0, entry.revents & Int16(POLLERR | POLLHUP) == 0 else {
            return false
        }
        guard case .processed(let count)? = try? tls.receiveCiphertext(from: socket), count > 0 else { return false }
        var scratch = ByteBuffer(capacity: 0)
        guard case .wantRead? = try? tls.read(into: &scratch) else { return false }
        return scratch.readableBytes == 0
    }

    /// Sends close_notify when TLS is up (best effort, without waiting) and closes the socket.
    func close() {
        if let tls {
            tls.shutdown()
            _ = try? tls.sendCiphertext(to: socket)
        }
        socket.close()
    }

    /// Sends every waiting TLS record.
    private func flush(until deadline: Deadline, phase: HTTPError.Phase) throws(HTTPError) {
        guard let tls else { return }
        while true {
            let done: Bool
            do { done = try tls.sendCiphertext(to: socket) } catch { throw Self.mapped(error) }
            if done { return }
            try waitFor(socket, Int16(POLLOUT), until: deadline, phase: phase)
        }
    }

    /// Takes in the peer's next TLS bytes (or its end of stream, which the session then reports).
    private func receive(until deadline: Deadline, phase: HTTPError.Phase) throws(HTTPError) {
        guard let tls else { return }
        while true {
            let result: IOResult
            do { result = try tls.receiveCiphertext(from: socket) } catch { throw Self.mapped(error) }
            switch result {
            case .processed, .eof: return
            case .wouldBlock: try waitFor(socket, Int16(POLLIN), until: deadline, phase: phase)
            }
        }
    }

    /// Socket failures under TLS are reported as I/O, like on a plain connection.
    private static func mapped(_ error: TLSError) -> HTTPError {
        if case .io(let system) = error { return .io(system) }
        return .tls(error)
    }
}
