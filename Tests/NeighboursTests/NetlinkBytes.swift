/// Hand-built rtnetlink messages for the parser's tests. The numbers are the kernel's ABI
/// as written in <linux/netlink.h>, <linux/rtnetlink.h> and <linux/neighbour.h>, typed here
/// rather than taken from the shim, so the tests also check the shim's constants.
enum NetlinkBytes {
    static let rtmNewNeigh: UInt16 = 28
    static let rtmGetNeigh: UInt16 = 30
    static let nlmsgNoop: UInt16 = 1
    static let nlmsgError: UInt16 = 2
    static let nlmsgDone: UInt16 = 3
    static let nlmsgOverrun: UInt16 = 4
    static let nlmFRequest: UInt16 = 0x1
    static let nlmFMulti: UInt16 = 0x2
    static let nlmFDump: UInt16 = 0x300
    static let ndaDst: UInt16 = 1
    static let ndaLladdr: UInt16 = 2
    static let ndaCacheinfo: UInt16 = 3
    static let afInet: UInt8 = 2
    static let afInet6: UInt8 = 10
    static let afBridge: UInt8 = 7

    static let nudIncomplete: UInt16 = 0x01
    static let nudReachable: UInt16 = 0x02
    static let nudStale: UInt16 = 0x04
    static let nudDelay: UInt16 = 0x08
    static let nudProbe: UInt16 = 0x10
    static let nudFailed: UInt16 = 0x20
    static let nudNoarp: UInt16 = 0x40
    static let nudPermanent: UInt16 = 0x80

    /// One netlink message: nlmsghdr (length, type, flags, sequence, port) and the payload,
    /// padded to 4 bytes unless `pad` is false.
    static func message(
        type: UInt16, flags: UInt16 = nlmFMulti, sequence: UInt32 = 7, payload: [UInt8], pad: Bool = true,
        length: UInt32? = nil
    ) -> [UInt8] {
        var bytes: [UInt8] = []
        append(&bytes, length ?? UInt32(16 + payload.count))
        append(&bytes, type)
        append(&bytes, flags)
        append(&bytes, sequence)
        append(&bytes, UInt32(4242))
        bytes += payload
        if pad { bytes += padding(bytes.count) }
        return bytes
    }

    /// An rtattr: length, type, value, padded to 4 bytes.
    static func attribute(_ type: UInt16, _ value: [UInt8], length: UInt16? = nil) -> [UInt8] {
        var bytes: [UInt8] = []
        append(&bytes, length ?? UInt16(4 + value.count))
        append(&bytes, type)
        bytes += value
        return bytes + padding(bytes.count)
    }

    /// struct ndmsg (family, padding, ifindex, state, flags, type) and its attributes.
    static func ndmsg(family: UInt8, state: UInt16, attributes: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = [family, 0, 0, 0]
        append(&bytes, Int32(3))  // ifindex
        append(&bytes, state)
        bytes += [0, 1]  // flags, type (RTN_UNICAST)
        return bytes + attributes.joined()
    }

    /// An RTM_NEWNEIGH as the kernel sends it: NDA_DST, NDA_LLADDR, NDA_CACHEINFO.
    static func neighbour(
        family: UInt8, address: [UInt8], mac: [UInt8]?, state: UInt16 = nudReachable, sequence: UInt32 = 7
    ) -> [UInt8] {
        var attributes = [attribute(ndaDst, address)]
        if let mac { attributes.append(attribute(ndaLladdr, mac)) }
        attributes.append(attribute(ndaCacheinfo, [UInt8](repeating: 0, count: 16)))
        return message(
            type: rtmNewNeigh, sequence: sequence, payload: ndmsg(family: family, state: state, attributes: attributes))
    }

    static func done(sequence: UInt32 = 7, code: Int32 = 0) -> [UInt8] {
        var payload: [UInt8] = []
        append(&payload, code)
        return message(type: nlmsgDone, sequence: sequence, payload: payload)
    }

    /// NLMSG_ERROR: struct nlmsgerr, the error number then the offending request's header.
    static func error(_ code: Int32, sequence: UInt32 = 7) -> [UInt8] {
        var payload: [UInt8] = []
        append(&payload, code)
        append(&payload, UInt32(28))
        append(&payload, rtmGetNeigh)
        append(&payload, nlmFRequest | nlmFDump)
        append(&payload, sequence)
        append(&payload, UInt32(0))
        return message(type: nlmsgError, flags: 0, sequence: sequence, payload: payload)
    }

    static func append(_ bytes: inout [UInt8], _ value: some FixedWidthInteger) {
        withUnsafeBytes(of: value) { bytes += $0 }
    }

    private static func padding(_ count: Int) -> [UInt8] { [UInt8](repeating: 0, count: (4 - count % 4) % 4) }
}
