import DNSWire
import TestSupport
import Testing

// Helpers for building packets by hand, so every malformed case in the tests reads as
// the bytes it is.

/// Bytes from hex text; spaces and newlines are ignored.
func hex(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8).filter { $0 != 0x20 && $0 != 0x0A }
    precondition(digits.count % 2 == 0, "odd hex length")
    func value(_ digit: UInt8) -> UInt8 {
        switch digit {
        case 0x30...0x39: digit - 0x30
        case 0x61...0x66: digit - 0x61 + 10
        case 0x41...0x46: digit - 0x41 + 10
        default: preconditionFailure("not hex")
        }
    }
    return stride(from: 0, to: digits.count, by: 2).map { value(digits[$0]) << 4 | value(digits[$0 + 1]) }
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

func u16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }

func u32(_ value: UInt32) -> [UInt8] { u16(UInt16(value >> 16)) + u16(UInt16(value & 0xFFFF)) }

/// Uncompressed wire form of a dotted name.
func wire(_ name: String) -> [UInt8] { try! DNSName(name).wire }

func name(_ text: String) -> DNSName { try! DNSName(text) }

func header(
    id: UInt16 = 0x1234, flags: UInt16 = 0x0100, qd: UInt16 = 1, an: UInt16 = 0, ns: UInt16 = 0, ar: UInt16 = 0
) -> [UInt8] {
    u16(id) + u16(flags) + u16(qd) + u16(an) + u16(ns) + u16(ar)
}

func question(_ owner: [UInt8], type: UInt16 = 1, dnsClass: UInt16 = 1) -> [UInt8] {
    owner + u16(type) + u16(dnsClass)
}

func rr(_ owner: [UInt8], type: UInt16, dnsClass: UInt16 = 1, ttl: UInt32 = 300, rdata: [UInt8]) -> [UInt8] {
    owner + u16(type) + u16(dnsClass) + u32(ttl) + u16(UInt16(rdata.count)) + rdata
}

func optRR(payload: UInt16 = 1232, ttl: UInt32 = 0, options: [UInt8] = [], owner: [UInt8] = [0]) -> [UInt8] {
    rr(owner, type: 41, dnsClass: payload, ttl: ttl, rdata: options)
}

/// A well-formed query for `qname` with an OPT record.
func sampleQuery(_ qname: String = "www.example.com", type: UInt16 = 1) -> [UInt8] {
    header(ar: 1) + question(wire(qname), type: type) + optRR()
}

/// Runs `body` and returns the `DNSWireError` it threw, or nil. (Closures in `#expect`
/// are not inferred as typed-throwing, so this takes any error and records a foreign one.)
func thrown<T>(_ body: () throws -> T) -> DNSWireError? {
    do {
        _ = try body()
        return nil
    } catch let error as DNSWireError {
        return error
    } catch {
        Issue.record("unexpected error type: \(error)")
        return nil
    }
}
