import EventLoop
import Glibc
import SystemIO

/// One DNS question over UDP from a thread that may block (`doctor`'s probes, the page's
/// reverse names), not from a loop: sent on `socket` (connected to the server), the answer
/// carrying `id` awaited until `deadline` on `clock`. A stray datagram (a late answer to
/// an earlier question) is not the answer: the wait goes on. Nil when none came in time;
/// on a clock moved by hand, in its time.
public enum BlockingExchange {
    public static func udp(
        _ query: [UInt8], id: UInt16, on socket: Socket, deadline: Nanoseconds, clock: any Clock
    ) throws -> [UInt8]? {
        _ = try query.withUnsafeBytes { bytes throws(SystemError) in try socket.send(bytes) }
        // A clock moved by hand (a test's) ends the wait by its steps, as a doorbell's.
        while try waitReady([socket.descriptor], deadline: deadline, clock: clock) {
            var buffer = ByteBuffer(capacity: 4096)
            guard try socket.receive(into: &buffer) != nil else { continue }
            let reply = buffer.readBytes(length: buffer.readableBytes) ?? []
            if reply.count >= 2, UInt16(reply[0]) << 8 | UInt16(reply[1]) == id { return reply }
        }
        return nil
    }
}
