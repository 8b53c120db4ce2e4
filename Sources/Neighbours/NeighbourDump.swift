import CSystem
import DomainMatch

/// The rtnetlink dump of the kernel's neighbour tables, as bytes: the request, and a reader
/// for the reply (rtnetlink(7), netlink(7); layouts in <linux/netlink.h>,
/// <linux/rtnetlink.h>, <linux/neighbour.h>). Pure: no socket, no clock.
///
/// Message headers and attribute headers are in host byte order, as netlink always is;
/// addresses are in network byte order.
public enum NeighbourDump {
    static let headerSize = Int(CS_NLMSG_HEADER_SIZE)
    static let ndmsgSize = Int(CS_NDMSG_SIZE)
    static let attributeHeaderSize = Int(CS_RTATTR_SIZE)

    /// States whose link-layer address the kernel has not confirmed or does not use:
    /// resolution under way or failed, or a link without addresses. NUD_NONE (0) is left out
    /// too: an entry just made, nothing learnt yet.
    static let unusableStates = CS_NUD_INCOMPLETE | CS_NUD_FAILED | CS_NUD_NOARP

    /// RTM_GETNEIGH with NLM_F_REQUEST | NLM_F_DUMP and a zeroed struct ndmsg: family
    /// AF_UNSPEC asks for every table (IPv4 and IPv6) in one dump.
    public static func request(sequence: UInt32) -> [UInt8] {
        let length = headerSize + ndmsgSize
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        withUnsafeBytes(of: UInt32(length)) { bytes += $0 }
        withUnsafeBytes(of: CS_RTM_GETNEIGH) { bytes += $0 }
        withUnsafeBytes(of: CS_NLM_F_REQUEST | CS_NLM_F_DUMP) { bytes += $0 }
        withUnsafeBytes(of: sequence) { bytes += $0 }
        withUnsafeBytes(of: UInt32(0)) { bytes += $0 }  // port: the kernel fills in ours
        bytes += repeatElement(0, count: ndmsgSize)
        return bytes
    }

    /// NLMSG_ALIGN and RTA_ALIGN: lengths round up to 4 bytes. Takes lengths below 2³² only.
    static func aligned(_ length: Int) -> Int { (length + 3) & ~3 }
}

/// Reads the reply to one `NeighbourDump.request(sequence:)`, datagram by datagram, into
/// the usable entries. Built fresh for each dump by whoever reads the socket (the caller's
/// thread; it is a value). Every length is checked before it is used, so hostile or cut
/// bytes end in a `NeighbourError`, never a trap.
///
/// Kept: RTM_NEWNEIGH entries of family AF_INET or AF_INET6 with an NDA_DST of the
/// family's length and a 6-byte NDA_LLADDR, in a state other than NONE, INCOMPLETE, FAILED
/// or NOARP. Skipped (counted in `skipped`): other entries. Ignored: messages of another
/// sequence number (what is left of an abandoned dump), NLMSG_NOOP, other message types,
/// and anything after NLMSG_DONE. A reply marked NLM_F_DUMP_INTR (the table changed during
/// the dump) is taken as it is: every entry in it was true, and one it lacks is a miss.
public struct NeighbourDumpReader {
    public let sequence: UInt32
    /// The entries kept so far, in the kernel's order.
    public private(set) var neighbours: [Neighbour] = []
    /// Entries read but not kept (state, family, link-layer address).
    public private(set) var skipped = 0
    /// NLMSG_DONE has arrived: the dump is whole.
    public private(set) var isComplete = false

    public init(sequence: UInt32) { self.sequence = sequence }

    /// Reads one datagram of the reply.
    public mutating func read(_ datagram: UnsafeRawBufferPointer) throws(NeighbourError) {
        var offset = 0
        while offset < datagram.count, !isComplete {
            let available = datagram.count - offset
            guard available >= NeighbourDump.headerSize else { throw .truncatedHeader(offset: offset) }
            let length = Int(datagram.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            let type = datagram.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self)
            let sequence = datagram.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
            guard length >= NeighbourDump.headerSize else { throw .badMessageLength(offset: offset, length: length) }
            guard length <= available else {
                throw .truncatedMessage(offset: offset, length: length, available: available)
            }
            if sequence == self.sequence {
                let payload = UnsafeRawBufferPointer(
                    rebasing: datagram[(offset + NeighbourDump.headerSize)..<(offset + length)])
                try message(type: type, payload: payload, at: offset)
            }
            // The last message of a datagram need not be padded.
            offset += min(NeighbourDump.aligned(length), available)
        }
    }

    private mutating func message(
        type: UInt16, payload: UnsafeRawBufferPointer, at offset: Int
    )
        throws(NeighbourError)
    {
        switch type {
        case CS_RTM_NEWNEIGH:
            try neighbour(payload, at: offset)
        case CS_NLMSG_DONE:
            // Since Linux 4.x a dump that failed part-way says so here (a negative errno).
            if payload.count >= 4 {
                let code = payload.loadUnaligned(as: Int32.self)
                if code < 0 { throw .kernel(errno: 0 &- code) }
            }
            isComplete = true
        case CS_NLMSG_ERROR:
            guard payload.count >= 4 else { throw .truncatedError(offset: offset) }
            let code = payload.loadUnaligned(as: Int32.self)
            // 0 is an acknowledgement: the request is over and nothing (more) is coming.
            guard code == 0 else { throw .kernel(errno: code < 0 ? 0 &- code : code) }
            isComplete = true
        case CS_NLMSG_OVERRUN:
            throw .overrun
        default:
            break
        }
    }

    /// One RTM_NEWNEIGH payload: struct ndmsg, then attributes.
    private mutating func neighbour(_ payload: UnsafeRawBufferPointer, at offset: Int) throws(NeighbourError) {
        guard payload.count >= NeighbourDump.ndmsgSize else { throw .truncatedNeighbour(offset: offset) }
        let family = payload[0]
        let state = payload.loadUnaligned(fromByteOffset: 8, as: UInt16.self)
        var destination: Range<Int>?
        var linkLayer: Range<Int>?
        var position = NeighbourDump.aligned(NeighbourDump.ndmsgSize)
        // Where the payload starts in the datagram, for the offsets of errors.
        let base = offset + NeighbourDump.headerSize
        while position < payload.count {
            let left = payload.count - position
            guard left >= NeighbourDump.attributeHeaderSize else { throw .truncatedAttribute(offset: base + position) }
            let length = Int(payload.loadUnaligned(fromByteOffset: position, as: UInt16.self))
            let type = payload.loadUnaligned(fromByteOffset: position + 2, as: UInt16.self) & CS_NLA_TYPE_MASK
            guard length >= NeighbourDump.attributeHeaderSize, length <= left else {
                throw .badAttributeLength(offset: base + position, length: length)
            }
            let value = (position + NeighbourDump.attributeHeaderSize)..<(position + length)
            switch type {
            case CS_NDA_DST: destination = value
            case CS_NDA_LLADDR: linkLayer = value
            default: break
            }
            position += min(NeighbourDump.aligned(length), left)
        }

        let address: IPAddress?
        switch (family, destination) {
        case (CS_AF_INET, let range?):
            guard range.count == 4 else {
                throw .badAddressLength(offset: base + range.lowerBound, family: family, length: range.count)
            }
            address = .v4(payload[range].reduce(0) { $0 << 8 | UInt32($1) })
        case (CS_AF_INET6, let range?):
            guard range.count == 16 else {
                throw .badAddressLength(offset: base + range.lowerBound, family: family, length: range.count)
            }
            let high = payload[range.prefix(8)].reduce(0) { $0 << 8 | UInt64($1) }
            let low = payload[range.suffix(8)].reduce(0) { $0 << 8 | UInt64($1) }
            address = .v6(high: high, low: low)
        default:
            address = nil
        }
        guard let address, state != 0, state & NeighbourDump.unusableStates == 0,
            let linkLayer, let mac = MACAddress(octets: payload[linkLayer])
        else {
            skipped += 1
            return
        }
        neighbours.append(Neighbour(address: address, mac: mac))
    }
}
