import CSystem
import Glibc
import SystemIO

/// The kernel's neighbour tables (IPv4 and IPv6), dumped whole through an rtnetlink socket.
/// The table source `NeighbourCache` uses outside tests.
///
/// Owned by one thread (the cache's). The socket is opened at the first dump, on the
/// calling thread, and so reads the tables of that thread's network namespace; it stays
/// open between dumps and is closed after any failure, so the next dump starts on a clean
/// socket rather than behind the remains of an abandoned one. The socket never waits: the
/// kernel queues a dump's first part during the request and each next part as the last is
/// read, so a whole dump is a few system calls with nothing to wait for, fit for an event
/// loop's thread.
public final class NetlinkNeighbourTable: NeighbourTableSource {
    /// About 50,000 entries, far above the kernel's default table limits (gc_thresh3 = 1024
    /// per family); beyond it the dump fails rather than grow without end.
    public static let defaultMaximumReplyBytes = 4 << 20

    /// One datagram of a dump is at most 32 KiB (the kernel's largest dump buffer); twice
    /// that leaves room, and a larger one is reported rather than cut.
    static let receiveBufferSize = 64 << 10

    private let maximumReplyBytes: Int
    private let buffer: UnsafeMutableRawBufferPointer
    private var descriptor: Int32 = -1
    private var sequence: UInt32 = 0

    /// - Parameter maximumReplyBytes: the most bytes one dump may take before it fails.
    public init(maximumReplyBytes: Int = NetlinkNeighbourTable.defaultMaximumReplyBytes) {
        self.maximumReplyBytes = maximumReplyBytes
        buffer = .allocate(byteCount: Self.receiveBufferSize, alignment: 8)
    }

    deinit {
        closeSocket()
        buffer.deallocate()
    }

    /// Dumps both tables and returns their usable entries (see `NeighbourDumpReader`).
    public func neighbours() throws(NeighbourError) -> [Neighbour] {
        do {
            return try dump()
        } catch {
            closeSocket()
            throw error
        }
    }

    private func dump() throws(NeighbourError) -> [Neighbour] {
        if descriptor < 0 {
            descriptor = try Self.call { () throws(SystemError) in
                try systemCall("socket(AF_NETLINK)") { cs_netlink_route_socket() }
            }
        }
        let descriptor = descriptor
        let buffer = buffer
        sequence &+= 1
        let request = NeighbourDump.request(sequence: sequence)
        _ = try Self.call { () throws(SystemError) in
            try systemCall("sendto(RTM_GETNEIGH)") {
                request.withUnsafeBytes { cs_netlink_send(descriptor, $0.baseAddress, $0.count) }
            }
        }
        var reader = NeighbourDumpReader(sequence: sequence)
        var total = 0
        while !reader.isComplete {
            var sender: UInt32 = 0
            let received = try Self.call { () throws(SystemError) in
                try nonBlockingCall("recvfrom(netlink)") {
                    cs_netlink_receive(descriptor, buffer.baseAddress, buffer.count, &sender)
                }
            }
            guard let received else { throw .unfinishedDump(bytes: total) }
            guard received <= buffer.count else { throw .datagramTooLarge(bytes: received) }
            total += received
            guard total <= maximumReplyBytes else { throw .replyTooLarge(limit: maximumReplyBytes) }
            // Only the kernel speaks for the tables (a privileged process could write to our port).
            guard sender == 0 else { continue }
            try reader.read(UnsafeRawBufferPointer(rebasing: buffer[0..<received]))
        }
        return reader.neighbours
    }

    /// A system call's failure as this module's error.
    private static func call<T>(_ body: () throws(SystemError) -> T) throws(NeighbourError) -> T {
        do { return try body() } catch { throw .system(error) }
    }

    private func closeSocket() {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
        descriptor = -1
    }
}
