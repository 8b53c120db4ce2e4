import DomainMatch
import SystemIO

/// One usable entry of the kernel's neighbour tables (ARP for IPv4, NDP for IPv6): the
/// device whose link-layer address answers for `address` on a local link.
public struct Neighbour: Hashable, Sendable, CustomStringConvertible {
    public let address: IPAddress
    public let mac: MACAddress

    public init(address: IPAddress, mac: MACAddress) {
        self.address = address
        self.mac = mac
    }

    public var description: String { "\(address) \(mac)" }
}

/// Why the neighbour tables could not be read. Offsets count bytes from the start of the
/// datagram the parser was given.
public enum NeighbourError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Fewer than 16 bytes left where a netlink message header should start.
    case truncatedHeader(offset: Int)
    /// A message header whose length is below its own 16 bytes.
    case badMessageLength(offset: Int, length: Int)
    /// A message longer than what is left of the datagram.
    case truncatedMessage(offset: Int, length: Int, available: Int)
    /// An RTM_NEWNEIGH message too short for its struct ndmsg.
    case truncatedNeighbour(offset: Int)
    /// An NLMSG_ERROR message too short for its error number.
    case truncatedError(offset: Int)
    /// Fewer than 4 bytes left where an attribute header should start.
    case truncatedAttribute(offset: Int)
    /// An attribute whose length is below its own 4 bytes or runs past its message.
    case badAttributeLength(offset: Int, length: Int)
    /// NDA_DST of a length that is not its family's (4 for IPv4, 16 for IPv6).
    case badAddressLength(offset: Int, family: UInt8, length: Int)
    /// The kernel refused or aborted the dump (NLMSG_ERROR, or NLMSG_DONE carrying an error).
    case kernel(errno: Int32)
    /// NLMSG_OVERRUN: the kernel lost data.
    case overrun
    /// A datagram longer than the receive buffer (it would have been cut).
    case datagramTooLarge(bytes: Int)
    /// The reply went past the bound before NLMSG_DONE.
    case replyTooLarge(limit: Int)
    /// Nothing more to read before NLMSG_DONE: the socket never waits, and a dump's next
    /// part is queued as soon as the last is read, so the dump is not going to finish.
    case unfinishedDump(bytes: Int)
    /// A system call on the netlink socket failed.
    case system(SystemError)

    public var description: String {
        switch self {
        case .truncatedHeader(let offset): "netlink header cut short at byte \(offset)"
        case .badMessageLength(let offset, let length): "netlink message at byte \(offset) has length \(length)"
        case .truncatedMessage(let offset, let length, let available):
            "netlink message at byte \(offset) has length \(length), \(available) bytes left"
        case .truncatedNeighbour(let offset): "neighbour message at byte \(offset) too short for ndmsg"
        case .truncatedError(let offset): "netlink error message at byte \(offset) too short"
        case .truncatedAttribute(let offset): "attribute header cut short at byte \(offset)"
        case .badAttributeLength(let offset, let length): "attribute at byte \(offset) has length \(length)"
        case .badAddressLength(let offset, let family, let length):
            "NDA_DST at byte \(offset) has \(length) bytes for family \(family)"
        case .kernel(let errno): "the kernel refused the neighbour dump: \(SystemError("RTM_GETNEIGH", errno: errno))"
        case .overrun: "netlink overrun: the kernel lost part of the neighbour dump"
        case .datagramTooLarge(let bytes): "netlink datagram of \(bytes) bytes exceeds the receive buffer"
        case .replyTooLarge(let limit): "neighbour dump exceeds \(limit) bytes"
        case .unfinishedDump(let bytes): "neighbour dump stopped after \(bytes) bytes without NLMSG_DONE"
        case .system(let error): "netlink: \(error)"
        }
    }
}
