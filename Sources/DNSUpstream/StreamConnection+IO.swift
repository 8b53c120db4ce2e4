import EventLoop
import Glibc
import SystemIO
import TLS

/// The socket side of a `StreamConnection`: non-blocking connect, the TLS handshake,
/// writing framed queries, reading and cutting replies. Interest is always `.read` once
/// connected (a reply or the peer's close can come at any time) plus `.write` while
/// bytes wait for room.
extension StreamConnection {
    /// Starts a non-blocking connect. A failure known at once is reported on the next
    /// loop iteration, so `enqueue` never calls an owner back from inside.
    func open() {
        assert(socket == nil, "open() on a connection that has a socket")
        phase = .connecting
        client?.streamConnectsStarted += 1
        do {
            let socket = try Socket.connect(to: key.address)
            try? socket.setNoDelay()  // queries are small and wanted now
            try loop.register(socket.descriptor, interest: .write, handler: self)
            self.socket = socket
        } catch {
            let generation = socketGeneration
            loop.scheduleTimer(after: 0) { [self] in
                if socketGeneration == generation { lost(.network(error)) }
            }
        }
    }

    func writable() {
        guard let socket else { return }
        if phase == .connecting {
            do {
                try socket.finishConnect()
            } catch {
                return lost(.network(error))
            }
            if let serverName = key.serverName {
                guard let tlsContext else { return lost(.unavailable("no TLS context")) }
                do {
                    tls = try TLSConnection(context: tlsContext, serverName: serverName)
                } catch {
                    return lost(.tls(error))
                }
                phase = .handshaking
            } else {
                phase = .ready
            }
        }
        pump()
    }

    func readable() {
        guard let socket else { return }
        var ended = false
        do throws(UpstreamError) {
            // Bounded per wake-up, so one busy connection cannot starve the loop.
            for _ in 0..<16 where !ended {
                let result = try receive(from: socket, ended: &ended)
                deliverFrames()
                guard self.socket === socket else { return }  // ended by a callback
                if result == .eof { ended = true }
                if result == .wouldBlock { break }
            }
        } catch {
            return lost(error)
        }
        if ended { return lost(.connectionClosed) }
        pump()
    }

    func hangup() {
        guard let socket else { return }
        let code = (try? socket.option(level: SOL_SOCKET, name: SO_ERROR)) ?? 0
        lost(
            code == 0 ? .connectionClosed : .network(SystemError("recv", errno: code, subject: key.address.description))
        )
    }

    /// One read from the socket into `incoming` (for TLS: ciphertext in, then every
    /// decrypted record out). `ended` is set on a TLS close_notify.
    private func receive(from socket: Socket, ended: inout Bool) throws(UpstreamError) -> IOResult {
        guard let tls else {
            do { return try socket.read(into: &incoming, maxBytes: 16_384) } catch { throw .network(error) }
        }
        do {
            let result = try tls.receiveCiphertext(from: socket)
            if phase == .handshaking, try tls.handshake() == .processed(0) { phase = .ready }
            guard phase == .ready else { return result }
            while true {
                switch try tls.read(into: &incoming, maxBytes: 16_384) {
                case .processed: continue
                case .closed: ended = true
                case .wantRead, .wantWrite: break
                }
                return result
            }
        } catch {
            throw Self.upstreamError(error)
        }
    }

    /// Cuts complete `length + message` frames off `incoming` and delivers them.
    private func deliverFrames() {
        let socket = self.socket
        while let length = incoming.getInteger(at: incoming.readerIndex, as: UInt16.self),
            incoming.readableBytes >= 2 + Int(length)
        {
            incoming.moveReaderIndex(forwardBy: 2)
            let reply = incoming.readBytes(length: Int(length)) ?? []
            deliver(reply)
            guard self.socket === socket else { return }
        }
        incoming.discardReadBytes()
    }

    /// Moves what can move now (handshake, queued queries, ciphertext) and sets interest.
    func pump() {
        guard let socket, phase != .connecting else { return }
        do throws(UpstreamError) {
            if let tls {
                try Self.mapping { () throws(TLSError) in
                    if phase == .handshaking, try tls.handshake() == .processed(0) { phase = .ready }
                    while phase == .ready, outgoing.readableBytes > 0 {
                        let result = try tls.write(from: &outgoing)
                        let flushed = try tls.sendCiphertext(to: socket)
                        if case .processed(let count) = result, count > 0 { continue }
                        if result == .wantWrite, flushed { continue }
                        break  // the socket is full, or TLS waits to read first
                    }
                    _ = try tls.sendCiphertext(to: socket)
                }
            } else if phase == .ready {
                while outgoing.readableBytes > 0 {
                    let result: IOResult
                    do { result = try socket.write(from: &outgoing) } catch { throw .network(error) }
                    guard case .processed(let count) = result, count > 0 else { break }
                }
            }
        } catch {
            return lost(error)
        }
        if outgoing.readableBytes == 0 { outgoing.clear() }
        let waitsForRoom = (phase == .ready && outgoing.readableBytes > 0) || (tls?.pendingCiphertext ?? 0) > 0
        try? loop.setInterest(waitsForRoom ? .both : .read, for: socket.descriptor)
    }

    private static func mapping(_ body: () throws(TLSError) -> Void) throws(UpstreamError) {
        do { try body() } catch { throw upstreamError(error) }
    }

    private static func upstreamError(_ error: TLSError) -> UpstreamError {
        if case .io(let system) = error { return .network(system) }
        return .tls(error)
    }
}
