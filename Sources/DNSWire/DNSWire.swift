// DNSWire: DNS messages on the wire, parsed and written. Pure: the standard library only,
// no sockets, no files, no clocks, no global mutable state; every type is a Sendable value.
//
// Layers, cheapest first (docs/ARCHITECTURE.md#house-habits (4)), each failing with a named `DNSWireError`:
//   DNSHeader(packet)          12 bytes, nothing else read                    Header.swift
//   DNSQuery.parse(packet)     + the single question and OPT; hot path        Query.swift
//   DNSMessage.parse(packet)   every record decoded                           Message.swift
//
// Writing: `DNSMessageWriter` builds a message straight into one buffer (synthesized
// answers), `DNSMessage.serialized` re-encodes a parsed one; both compress names and cut
// to a size limit. `DNSPacket` edits serialized messages in place or nearly so: ID,
// rcode, TTLs, truncation, ECH removal.
//
// Ownership: parsers take `[UInt8]` and never keep it past the call (a `DNSReader` holds
// it only while it lives); results own their bytes. Offsets in errors and in
// `DNSRecordLocation` are byte offsets in the array that was parsed.

/// Operations on a serialized message that avoid a full parse: in-place header and TTL
/// edits, truncation, ECH removal. All validate what they walk and throw, never trap.
public enum DNSPacket {}
