import CSystem
import Glibc

/// Slots for a batch of datagrams: one `recvmmsg` fills them, one `sendmmsg` sends them.
/// All memory is allocated once here, so a server that keeps one batch per socket receives
/// and sends without allocating.
///
/// Loop-confined: used by the one thread that owns the socket (not `Sendable`). The bytes
/// and addresses it hands out are valid until the batch is next received into or cleared.
public final class DatagramBatch {
    /// How many slots; at most `CS_BATCH_MAX` (256), what one system call takes.
    public let slotCount: Int
    /// The largest datagram a slot holds; a longer one is cut and flagged `isTruncated`.
    public let slotSize: Int
    /// Slots in use: filled by the last receive, or appended for the next send.
    public internal(set) var count = 0

    let slots: UnsafeMutablePointer<cs_datagram>
    private let memory: UnsafeMutableRawPointer

    public init(slots: Int, slotSize: Int) {
        slotCount = min(max(slots, 1), Int(CS_BATCH_MAX))
        self.slotSize = max(slotSize, 1)
        memory = UnsafeMutableRawPointer.allocate(byteCount: slotCount * self.slotSize, alignment: 16)
        self.slots = .allocate(capacity: slotCount)
        for index in 0..<slotCount {
            (self.slots + index).initialize(to: cs_datagram())
            self.slots[index].bytes = memory + index * self.slotSize
            self.slots[index].capacity = self.slotSize
        }
    }

    deinit {
        slots.deinitialize(count: slotCount)
        slots.deallocate()
        memory.deallocate()
    }

    /// The payload of slot `index` (< `count`).
    public func bytes(at index: Int) -> UnsafeRawBufferPointer {
        precondition(index >= 0 && index < count, "DatagramBatch: slot \(index) of \(count)")
        return UnsafeRawBufferPointer(start: slots[index].bytes, count: min(slots[index].length, slotSize))
    }

    /// The source (after a receive) or destination (when appended) of slot `index`.
    public func address(at index: Int) -> SocketAddress? {
        precondition(index >= 0 && index < count, "DatagramBatch: slot \(index) of \(count)")
        return SocketAddress(slots[index].address, length: slots[index].address_length)
    }

    /// The interface slot `index`'s datagram arrived on, when the socket asked for it
    /// (`Socket.reportArrivalInterface()`); nil otherwise. Reads the slot's control
    /// messages in place.
    public func arrivalInterface(at index: Int) -> UInt32? {
        precondition(index >= 0 && index < count, "DatagramBatch: slot \(index) of \(count)")
        let slot = UnsafeRawPointer(slots + index)
        let control = slot + Self.controlOffset
        let length = min(slots[index].control_length, Int(CS_CONTROL_SIZE))
        return ControlMessages.arrivalInterface(in: UnsafeRawBufferPointer(start: control, count: length))
    }

    private static let controlOffset = MemoryLayout<cs_datagram>.offset(of: \.control)!

    /// The datagram was longer than `slotSize` and its tail is lost (MSG_TRUNC).
    public func isTruncated(at index: Int) -> Bool {
        precondition(index >= 0 && index < count, "DatagramBatch: slot \(index) of \(count)")
        return slots[index].flags & CS_MSG_TRUNC != 0
    }

    /// Empties the batch so it can be filled for sending.
    public func removeAll() { count = 0 }

    /// Appends a datagram for `address`, written in place by `fill`, which gets `slotSize`
    /// bytes and returns how many it used, or nil when it wrote nothing (the slot stays
    /// free). False when every slot is taken or `fill` wrote nothing.
    @discardableResult
    public func append(to address: SocketAddress, _ fill: (UnsafeMutableRawBufferPointer) -> Int?) -> Bool {
        guard count < slotCount else { return false }
        let slot = slots + count
        guard let used = fill(UnsafeMutableRawBufferPointer(start: slot.pointee.bytes, count: slotSize)) else {
            return false
        }
        slot.pointee.length = min(max(used, 0), slotSize)
        slot.pointee.address_length = address.write(to: &slot.pointee.address)
        slot.pointee.flags = 0
        count += 1
        return true
    }

    /// Appends a copy of `bytes` for `address`; false when every slot is taken or the
    /// datagram is longer than `slotSize`.
    @discardableResult
    public func append(_ bytes: UnsafeRawBufferPointer, to address: SocketAddress) -> Bool {
        guard bytes.count <= slotSize else { return false }
        return append(to: address) { space in
            if let base = bytes.baseAddress { space.baseAddress!.copyMemory(from: base, byteCount: bytes.count) }
            return bytes.count
        }
    }
}
