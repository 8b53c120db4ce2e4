import EventLoop
import Testing

@Suite struct ByteBufferTests {
    @Test func writeThenReadIntegersBigEndian() {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt8(0xAB))
        buffer.writeInteger(UInt16(0x1234))
        buffer.writeInteger(UInt32(0xDEAD_BEEF))
        #expect(buffer.readableBytes == 7)
        #expect(buffer.getBytes(at: 0, length: 7) == [0xAB, 0x12, 0x34, 0xDE, 0xAD, 0xBE, 0xEF])
        #expect(buffer.readInteger(as: UInt8.self) == 0xAB)
        #expect(buffer.readInteger(as: UInt16.self) == 0x1234)
        #expect(buffer.readInteger(as: UInt32.self) == 0xDEAD_BEEF)
        #expect(buffer.readableBytes == 0)
    }

    @Test func littleEndianAndUnalignedAccess() {
        var buffer = ByteBuffer(bytes: [0xFF])
        buffer.writeInteger(UInt32(0x0102_0304), endianness: .little)
        #expect(buffer.getBytes(at: 1, length: 4) == [4, 3, 2, 1])
        #expect(buffer.getInteger(at: 1, endianness: .little, as: UInt32.self) == 0x0102_0304)
        #expect(buffer.getInteger(at: 1, as: UInt32.self) == 0x0403_0201)
    }

    @Test func getPeeksWithoutConsuming() {
        var buffer = ByteBuffer()
        buffer.writeString("hello")
        #expect(buffer.getString(at: 1, length: 3) == "ell")
        #expect(buffer.getInteger(at: 0, as: UInt8.self) == UInt8(ascii: "h"))
        #expect(buffer.readerIndex == 0 && buffer.readableBytes == 5)
        #expect(buffer.readString(length: 2) == "he")
        // Consumed bytes are no longer readable, so get* refuses them.
        #expect(buffer.getString(at: 0, length: 1) == nil)
        #expect(buffer.getString(at: 2, length: 3) == "llo")
    }

    @Test func shortReadsReturnNilAndConsumeNothing() {
        var buffer = ByteBuffer(bytes: [1, 2, 3])
        #expect(buffer.readInteger(as: UInt32.self) == nil)
        #expect(buffer.readBytes(length: 4) == nil)
        #expect(buffer.readString(length: 4) == nil)
        #expect(buffer.readBuffer(length: 4) == nil)
        #expect(buffer.readableBytes == 3)
        #expect(buffer.getInteger(at: 2, as: UInt16.self) == nil)
        #expect(buffer.getInteger(at: -1, as: UInt8.self) == nil)
        #expect(buffer.getBytes(at: Int.max, length: 2) == nil)
        #expect(buffer.getBytes(at: 1, length: -1) == nil)
        let moved = buffer.moveReaderIndex(forwardBy: 4)
        #expect(!moved)
        #expect(buffer.readBytes(length: 3) == [1, 2, 3])
        #expect(buffer.readInteger(as: UInt8.self) == nil)
    }

    @Test func setOverwritesOnlyReadableBytes() {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt16(0))  // a length placeholder
        buffer.writeString("abc")
        let setLength = buffer.setInteger(UInt16(3), at: 0)
        #expect(setLength)
        #expect(buffer.getInteger(at: 0, as: UInt16.self) == 3)
        let setPair = buffer.setBytes([0x41, 0x42], at: 3)
        #expect(setPair)
        #expect(buffer.getString(at: 2, length: 3) == "aAB")
        let pastEnd = buffer.setInteger(UInt32(1), at: 3)  // would run past the writer index
        let atEnd = buffer.setBytes([1], at: 5)
        #expect(!pastEnd && !atEnd)
        #expect(buffer.readableBytes == 5)
    }

    @Test func growsFromZeroCapacity() {
        var buffer = ByteBuffer(capacity: 0)
        for index in 0..<100_000 { buffer.writeInteger(UInt8(truncatingIfNeeded: index)) }
        #expect(buffer.readableBytes == 100_000)
        #expect(buffer.capacity >= 100_000)
        #expect(buffer.getInteger(at: 99_999, as: UInt8.self) == UInt8(truncatingIfNeeded: 99_999))
        buffer.writeBytes([UInt8](repeating: 7, count: 1 << 20))
        #expect(buffer.readableBytes == 100_000 + (1 << 20))
        #expect(buffer.getBytes(at: buffer.writerIndex - 1, length: 1) == [7])
    }

    @Test func writesAnySequenceAndReservesAhead() {
        var buffer = ByteBuffer(capacity: 4)
        #expect(buffer.writeBytes((1...5).lazy.map { UInt8($0) }) == 5)  // not contiguous: byte by byte
        #expect(buffer.writeBytes(repeatElement(9, count: 3)) == 3)
        #expect(buffer.getBytes(at: 0, length: 8) == [1, 2, 3, 4, 5, 9, 9, 9])
        buffer.reserveCapacity(minimumWritableBytes: 1_000)
        #expect(buffer.writableBytes >= 1_000)
        let capacity = buffer.capacity
        buffer.writeBytes([UInt8](repeating: 0, count: 1_000))
        #expect(buffer.capacity == capacity)  // no growth: the space was reserved
        #expect(ByteBuffer(bytes: []).readableBytes == 0)
    }

    @Test func discardReadBytesKeepsTheRest() {
        var buffer = ByteBuffer(capacity: 8)
        buffer.writeBytes([1, 2, 3, 4, 5, 6])
        _ = buffer.readBytes(length: 4)
        let capacity = buffer.capacity
        buffer.discardReadBytes()
        #expect(buffer.readerIndex == 0 && buffer.writerIndex == 2)
        #expect(buffer.readBytes(length: 2) == [5, 6])
        #expect(buffer.capacity == capacity)
        buffer.discardReadBytes()
        #expect(buffer.writerIndex == 0 && buffer.writableBytes == capacity)
    }

    @Test func copiesAreIndependent() {
        var original = ByteBuffer(bytes: [1, 2, 3])
        var copy = original
        copy.setInteger(UInt8(9), at: 0)
        copy.writeInteger(UInt8(4))
        #expect(original.getBytes(at: 0, length: 3) == [1, 2, 3])
        #expect(copy.getBytes(at: 0, length: 4) == [9, 2, 3, 4])
        original.discardReadBytes()
        _ = original.readInteger(as: UInt8.self)
        #expect(copy.readableBytes == 4)
    }

    @Test func rawAccessVerbs() {
        var buffer = ByteBuffer()
        let written = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 16) { space in
            #expect(space.count >= 16)
            for index in 0..<10 { space[index] = UInt8(index) }
            return 10
        }
        #expect(written == 10 && buffer.readableBytes == 10)
        let sum = buffer.withUnsafeReadableBytes { $0.reduce(0) { $0 + Int($1) } }
        #expect(sum == 45)
        let first = buffer.readWithUnsafeReadableBytes { _ in 4 }
        let rest = buffer.readWithUnsafeReadableBytes { _ in 99 }  // clamped
        #expect(first == 4 && rest == 6)
        #expect(buffer.readableBytes == 0)
    }

    @Test func equalityComparesReadableBytes() {
        var a = ByteBuffer(bytes: [0, 1, 2])
        _ = a.readInteger(as: UInt8.self)
        let b = ByteBuffer(bytes: [1, 2])
        #expect(a == b)
        #expect(a != ByteBuffer(bytes: [1, 3]))
        var c = ByteBuffer()
        c.writeBuffer(b)
        #expect(c == b)
        var d = ByteBuffer(bytes: [5, 6, 7])
        let front = d.readBuffer(length: 2)
        #expect(front == ByteBuffer(bytes: [5, 6]))
        #expect(d.readableBytes == 1)
        d.clear()
        #expect(d.readableBytes == 0 && d.readerIndex == 0)
    }
}
