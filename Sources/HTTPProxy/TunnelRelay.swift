import EventLoop
import Glibc
import Metrics
import ProxyCore
import SystemIO

/// A tunnel's relay after the SNI check (docs/proxy.md#connect). Half-close is respected: a side's
/// EOF becomes a FIN to the other side once everything before it is delivered, and the
/// relay ends when both directions have. Loop-confined; the handler forwards the
/// sockets' readiness here.
///
/// Per direction: bytes the proxy already holds (the inspected ClientHello, the `200`)
/// go first. Then reads are copied through the loop's one buffer while they are small —
/// for a request or a short answer two splice(2) calls through a pipe cost more than a
/// recv and a send (splicing everything, requests through tunnels ran 8 % behind
/// squid's). Once a read fills that buffer the direction is bulk for good: it moves with
/// splice through a pipe, no byte copied into user space and nothing allocated per chunk.
/// A pipe is borrowed from the loop's pool for the move and given back empty, kept only
/// while the destination is full. The source is read only while everything read before
/// has been delivered — backpressure costs no buffer. A read shorter than the room means
/// the source is drained for now; level-triggered readiness says when there is more, so
/// no read ends in EAGAIN.
final class TunnelRelay {
    struct Direction {
        /// Held only while it has bytes the destination has not taken yet.
        var pipe: SplicePipe?
        /// Bytes to write before the pipe's.
        var pending: ByteBuffer
        /// The source may have bytes (it was reported readable, or it has hung up).
        var canRead = false
        var sourceEOF = false
        /// The source hung up (both halves closed): it is no longer watched, only read dry.
        var detached = false
        /// Everything delivered and the destination's write side shut down.
        var finished = false
        /// A read filled the copy buffer: this direction carries bulk data, spliced.
        var bulk = false
        /// The destination is the device, whose send buffer is fixed at
        /// `ProxyLimits.clientSendBuffer`: a splice into the pipe takes no more than that
        /// buffer has room for (at least `RelayBuffers.leastFill`), so a device that stops
        /// reading leaves little in a pipe rather than up to a megabyte.
        var towardDevice = false
        /// Bytes written to the destination so far in the current step (the stall measure).
        var movedOut = false

        var wantsRead: Bool { !sourceEOF && !detached && pending.readableBytes == 0 && pipe == nil }
        var wantsWrite: Bool { !finished && (pending.readableBytes > 0 || pipe != nil) }
    }

    enum Side { case client, upstream }

    /// The system calls the relay has made, by kind: what keeps a keep-alive tunnel cheap
    /// is one read and one write per direction per request, no read that ends in EAGAIN
    /// and no epoll_ctl while the tunnel only carries small exchanges (docs/performance.md,
    /// "Keep-alive tunnels"). Counted always (plain integers on the loop thread); read by
    /// tests, which hold the relay to that budget.
    struct Calls: Equatable {
        var reads = 0
        /// Reads that found nothing (EAGAIN): each one is a wasted system call.
        var emptyReads = 0
        var writes = 0
        /// epoll_ctl(MOD) for either socket.
        var interestChanges = 0
        /// splice(2) calls, either way.
        var splices = 0
    }

    let loop: EventLoop
    let buffers: RelayBuffers
    let client: Socket
    let upstream: Socket
    /// Client → origin, origin → client.
    var up: Direction
    var down: Direction
    /// When a byte last moved (monotonic): `tunnel_idle` is measured from it.
    private(set) var lastActivity: Nanoseconds
    /// Bytes read from either side so far (the minutes online count them).
    private(set) var moved: UInt64 = 0
    private var watched: (client: Interest?, upstream: Interest?) = (nil, nil)
    private(set) var calls = Calls()
    /// Bytes waiting for the device that it does not take (`stall_timeout`).
    private(set) var deviceStall = StallWatch()

    /// Counts every byte read from either side (the metrics' tunnel bytes).
    private let bytes: Counter?

    init(
        loop: EventLoop, buffers: RelayBuffers, client: Socket, upstream: Socket, toUpstream: ByteBuffer,
        toClient: ByteBuffer, bytes: Counter? = nil
    ) {
        self.bytes = bytes
        self.loop = loop
        self.buffers = buffers
        self.client = client
        self.upstream = upstream
        up = Direction(pending: toUpstream)
        down = Direction(pending: toClient)
        down.towardDevice = true
        lastActivity = loop.clock.now()
    }

    var isFinished: Bool { up.finished && down.finished }

    /// Starts moving: what is pending goes out, then both sockets are watched.
    func start() throws(SystemError) {
        try pump(&up, from: client, to: upstream)
        try pump(&down, from: upstream, to: client)
        noteStall()
        try watch()
    }

    func readable(_ side: Side) throws(SystemError) {
        switch side {
        case .client:
            up.canRead = true
            try pump(&up, from: client, to: upstream)
        case .upstream:
            down.canRead = true
            try pump(&down, from: upstream, to: client)
        }
        noteStall()
        try watch()
    }

    func writable(_ side: Side) throws(SystemError) {
        switch side {
        case .client: try pump(&down, from: upstream, to: client)
        case .upstream: try pump(&up, from: client, to: upstream)
        }
        noteStall()
        try watch()
    }

    /// EPOLLHUP/EPOLLERR on `side`. A pending error, or a hang-up while bytes are still
    /// owed to that side, fails the relay (thrown). A clean hang-up after its write side
    /// was shut down leaves only its unread input: the socket stops being watched (a
    /// hung-up socket would be reported ready forever) and is read dry at once, further
    /// reads driven by the other side's writability.
    func hangup(_ side: Side) throws(SystemError) {
        let socket = side == .client ? client : upstream
        let error = (try? socket.option(level: SOL_SOCKET, name: SO_ERROR)) ?? EIO
        let owed = side == .client ? down.finished : up.finished
        guard error == 0, owed else { throw SystemError("relay", errno: error == 0 ? ECONNRESET : error) }
        try? loop.deregister(socket.descriptor)
        switch side {
        case .client:
            watched.client = nil
            up.detached = true
            up.canRead = true
            try pump(&up, from: client, to: upstream)
        case .upstream:
            watched.upstream = nil
            down.detached = true
            down.canRead = true
            try pump(&down, from: upstream, to: client)
        }
        noteStall()
        try watch()
    }

    /// Moves what can move now in one direction.
    private func pump(_ direction: inout Direction, from source: Socket, to destination: Socket) throws(SystemError) {
        while !direction.finished {
            if direction.pending.readableBytes > 0 {
                calls.writes += 1
                if case .processed(let count) = try destination.write(from: &direction.pending), count > 0 {
                    direction.movedOut = true
                }
                guard direction.pending.readableBytes == 0 else { return }
                direction.pending = ByteBuffer(capacity: 0)
            }
            if let pipe = direction.pipe {
                calls.splices += 1
                if case .processed(let count) = try pipe.drain(to: destination), count > 0 { direction.movedOut = true }
                guard pipe.isEmpty else { return }
                direction.pipe = nil
                buffers.give(pipe)
            }
            if direction.sourceEOF {
                // ENOTCONN: the destination's peer is already gone; nothing more to say.
                try? destination.shutdown(.write)
                direction.finished = true
                return
            }
            guard direction.canRead else { return }
            if !direction.bulk {
                try copy(&direction, from: source, to: destination)
                continue
            }
            let pipe = try buffers.takePipe()
            calls.splices += 1
            let room = direction.towardDevice ? deviceRoom(destination, pipe: pipe) : pipe.capacity
            let result: IOResult
            do { result = try pipe.fill(from: source, maxBytes: room) } catch {
                buffers.give(pipe)
                throw error
            }
            switch result {
            case .processed(let moved):
                lastActivity = loop.clock.now()
                bytes?.add(moved)
                self.moved &+= UInt64(moved)
                direction.canRead = moved == room || direction.detached
                direction.pipe = pipe
            case .wouldBlock:
                direction.canRead = false
                buffers.give(pipe)
            case .eof:
                direction.sourceEOF = true
                buffers.give(pipe)
            }
        }
    }

    /// One read through the copy buffer, written on at once; what the destination does
    /// not take waits in `pending`.
    private func copy(_ direction: inout Direction, from source: Socket, to destination: Socket) throws(SystemError) {
        var buffer = buffers.takeCopyBuffer()
        defer { buffers.give(buffer) }
        calls.reads += 1
        switch try source.read(into: &buffer, maxBytes: RelayBuffers.copyLimit) {
        case .processed(let moved):
            lastActivity = loop.clock.now()
            bytes?.add(moved)
            self.moved &+= UInt64(moved)
            direction.bulk = moved == RelayBuffers.copyLimit
            direction.canRead = direction.bulk || direction.detached
            calls.writes += 1
            if case .processed(let count) = try destination.write(from: &buffer), count > 0 {
                direction.movedOut = true
            }
            if buffer.readableBytes > 0, let rest = buffer.readBuffer(length: buffer.readableBytes) {
                direction.pending = rest
            }
        case .wouldBlock:
            calls.emptyReads += 1
            direction.canRead = false
        case .eof:
            direction.sourceEOF = true
        }
    }

    /// What one splice toward the device may take: the room left in its send buffer, at
    /// least `RelayBuffers.leastFill` (a device that keeps up always has room), at most the
    /// pipe. One ioctl per bulk splice.
    private func deviceRoom(_ destination: Socket, pipe: SplicePipe) -> Int {
        let queued = (try? destination.unsentBytes()) ?? 0
        return min(pipe.capacity, max(RelayBuffers.leastFill, ProxyLimits.clientSendBuffer - queued))
    }

    /// After a step: whether bytes wait for the device and whether it took any.
    private func noteStall() {
        deviceStall.note(waiting: down.wantsWrite, moved: down.movedOut) { loop.clock.now() }
        down.movedOut = false
    }

    /// Each socket's interest: reading for the direction it feeds, writing for the one it drains.
    /// None once both directions have finished: the connection closes both sockets next.
    private func watch() throws(SystemError) {
        guard !isFinished else { return }
        if !up.detached {
            var interest: Interest = up.wantsRead ? .read : .none
            if down.wantsWrite { interest.insert(.write) }
            if interest != watched.client {
                if watched.client != nil { calls.interestChanges += 1 }
                try loop.setInterest(interest, for: client.descriptor)
                watched.client = interest
            }
        }
        if !down.detached {
            var interest: Interest = down.wantsRead ? .read : .none
            if up.wantsWrite { interest.insert(.write) }
            if interest != watched.upstream {
                if watched.upstream != nil { calls.interestChanges += 1 }
                try loop.setInterest(interest, for: upstream.descriptor)
                watched.upstream = interest
            }
        }
    }

    /// Gives back pipes still held (the pool drops those with bytes left in them).
    func stop() {
        for pipe in [up.pipe, down.pipe].compactMap({ $0 }) { buffers.give(pipe) }
        up.pipe = nil
        down.pipe = nil
    }
}
