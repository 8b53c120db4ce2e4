import DNSWire

/// An answer the pipeline has made but not yet written, so the UDP server can write it
/// straight into a send slot instead of into an array of its own
/// (docs/performance.md#allocations-per-query). Anyone else asks for `bytes`.
public struct Answer {
    enum Kind {
        case cached(CachedAnswer.Serving)
        /// Already written, in the loop's `QueryScratch.answer`.
        case written(QueryScratch)
    }

    let kind: Kind

    init(
        cached entry: CacheEntry, to query: DNSQuery, age: UInt32, stale: Bool, cap: UInt32, removeECH: Bool,
        maxSize: Int, error: ExtendedDNSError? = nil
    ) {
        kind = .cached(
            CachedAnswer.Serving(
                entry: entry, query: query, age: age, stale: stale, cap: cap, removeECH: removeECH, maxSize: maxSize,
                error: error))
    }

    /// An answer the pipeline wrote into `scratch.answer`.
    init(writtenIn scratch: QueryScratch) { kind = .written(scratch) }

    /// Writes the answer at the start of `space` and returns its length; nil, with `space`
    /// left unused, when it needs more room or a form only `bytes` makes (cut to the
    /// client's size, a stale answer's EDE).
    public func write(into space: UnsafeMutableRawBufferPointer) -> Int? {
        switch kind {
        case .cached(let serving): return serving.write(into: space)
        case .written(let scratch):
            guard scratch.answer.count <= space.count else { return nil }
            scratch.answer.withUnsafeBytes { space.copyMemory(from: $0) }
            return scratch.answer.count
        }
    }

    /// The answer in an array of its own.
    public var bytes: [UInt8] {
        switch kind {
        case .cached(let serving): return serving.bytes
        case .written(let scratch): return scratch.answer
        }
    }

    /// The low four bits of the answer's rcode, as `/metrics` counts it.
    var rcode: UInt8 {
        switch kind {
        case .cached(let serving): return UInt8(truncatingIfNeeded: serving.entry.rcode.rawValue & 0x0F)
        case .written(let scratch): return scratch.answer.count > 3 ? scratch.answer[3] & 0x0F : 255
        }
    }
}
