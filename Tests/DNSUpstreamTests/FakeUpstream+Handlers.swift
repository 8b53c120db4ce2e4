import DNSWire
import EventLoop

/// The fake's UDP side: one reply (or none) per query, per its behavior.
final class FakeUDPHandler: Selectable {
    let server: FakeUpstream
    let socket: Socket
    let loop: EventLoop
    var buffer = ByteBuffer()

    init(server: FakeUpstream, socket: Socket, loop: EventLoop) {
        self.server = server
        self.socket = socket
        self.loop = loop
    }

    func readable() {
        while true {
            buffer.clear()
            guard let source = try? socket.receive(into: &buffer),
                let packet = buffer.readBytes(length: buffer.readableBytes)
            else { return }
            server.udpQueries.add(1, ordering: .relaxed)
            guard let query = server.record(packet) else { continue }
            switch server.behavior {
            case .answer(let rcode): send(server.reply(to: query, rcode: rcode), to: source)
            case .closeTCP: send(server.reply(to: query), to: source)
            case .truncateOverUDP: send(server.reply(to: query, truncated: true, empty: true), to: source)
            case .silent: break
            case .forgeFirst:
                let forged = RData.IPv4(6, 6, 6, 6)
                send(server.reply(to: query, id: query.header.id ^ 0x5A5A, address: forged), to: source)
                send(server.reply(to: query, address: forged, name: try! DNSName("forged.example")), to: source)
                let genuine = server.reply(to: query)
                loop.scheduleTimer(after: 50_000_000) { [self] in send(genuine, to: source) }
            }
        }
    }

    private func send(_ bytes: [UInt8], to peer: SocketAddress) {
        _ = bytes.withUnsafeBytes { try? socket.send($0, to: peer) }
    }

    func writable() {}
    func hangup() {}
}

/// The fake's TCP listener: every connection answers each framed query in full.
final class FakeTCPListener: Selectable {
    let server: FakeUpstream
    let socket: Socket
    let loop: EventLoop

    init(server: FakeUpstream, socket: Socket, loop: EventLoop) {
        self.server = server
        self.socket = socket
        self.loop = loop
    }

    func readable() {
        while let accepted = try? socket.accept() {
            try? loop.register(
                accepted.descriptor, interest: .read,
                handler: FakeTCPConnection(server: server, socket: accepted, loop: loop))
        }
    }

    func writable() {}
    func hangup() {}
}

final class FakeTCPConnection: Selectable {
    let server: FakeUpstream
    let socket: Socket
    let loop: EventLoop
    var incoming = ByteBuffer()
    var answered = 0

    init(server: FakeUpstream, socket: Socket, loop: EventLoop) {
        self.server = server
        self.socket = socket
        self.loop = loop
    }

    func readable() {
        guard socket.isOpen else { return }
        guard let result = try? socket.read(into: &incoming), result != .eof else { return hangup() }
        while let length = incoming.getInteger(at: incoming.readerIndex, as: UInt16.self),
            incoming.readableBytes >= 2 + Int(length)
        {
            incoming.moveReaderIndex(forwardBy: 2)
            let packet = incoming.readBytes(length: Int(length))!
            server.tcpQueries.add(1, ordering: .relaxed)
            guard let query = server.record(packet) else { continue }
            let rcode: DNSRcode
            switch server.behavior {
            case .silent: continue
            case .answer(let code): rcode = code
            case .closeTCP(let limit) where answered >= limit: return hangup()
            default: rcode = .noError
            }
            var framed = ByteBuffer()
            let reply = server.reply(to: query, rcode: rcode)
            framed.writeInteger(UInt16(reply.count))
            framed.writeBytes(reply)
            _ = try? socket.write(from: &framed)  // small: the socket buffer takes it whole
            answered += 1
        }
        incoming.discardReadBytes()
    }

    func writable() {}

    func hangup() {
        guard socket.isOpen else { return }
        try? loop.deregister(socket.descriptor)
        socket.close()
    }
}
