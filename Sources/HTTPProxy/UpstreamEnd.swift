import EventLoop

/// The upstream socket's registration: its readiness goes to the connection's handler.
/// Holds the handler strongly (an `unowned` reference costs a checked retain at every
/// use); the handler lets go of this end in `dropUpstream`, which every close runs.
final class UpstreamEnd: Selectable {
    let handler: ConnectionHandler
    let socket: Socket
    var connecting = true
    var interest: Interest = .write
    /// Once connected, read interest is kept while the machine wants no bytes from the
    /// origin (a tunnel waiting for the client's first bytes), until bytes it did not want
    /// arrive (`ConnectionHandler.clientEagerRead`): the relay then starts on a socket
    /// already watched for reading.
    var eagerRead = true

    init(handler: ConnectionHandler, socket: Socket) {
        self.handler = handler
        self.socket = socket
    }

    func readable() { handler.upstreamReadable() }
    func writable() { handler.upstreamWritable() }
    func hangup() { handler.upstreamHangup() }
}
