import EventLoop

/// The upstream socket's registration: its readiness goes to the connection's handler.
final class UpstreamEnd: Selectable {
    unowned let handler: ConnectionHandler
    let socket: Socket
    var connecting = true
    var interest: Interest = .write

    init(handler: ConnectionHandler, socket: Socket) {
        self.handler = handler
        self.socket = socket
    }

    func readable() { handler.upstreamReadable() }
    func writable() { handler.upstreamWritable() }
    func hangup() { handler.upstreamHangup() }
}
