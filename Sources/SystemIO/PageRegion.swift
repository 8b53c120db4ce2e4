import CSystem
import Glibc

/// Memory taken from the kernel in whole pages and given back to it when the region is
/// released (docs/performance.md#the-heap-by-owner). For data that comes in a burst and
/// goes all at once, such as a window of hits: in malloc's heap it would be carved among
/// longer-lived allocations (the answer cache) and its pages would stay resident after it
/// was freed. A region grows by remapping its pages, so growing copies nothing and never
/// holds the old and the new storage at once.
///
/// Not synchronised: its owner serialises access (a shard's lock, then one flushing
/// thread). An address handed out is valid until the next `reserve` or the release.
public final class PageRegion: @unchecked Sendable {
    public private(set) var base: UnsafeMutableRawPointer?
    /// Bytes mapped: a whole number of pages, 0 until the first `reserve`.
    public private(set) var capacity = 0
    /// `mmap` and `mremap` calls made for this region (tests count them).
    public private(set) var mappings = 0

    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    public init() {}

    deinit {
        if let base { munmap(base, capacity) }
    }

    /// Makes room for at least `bytes` bytes, keeping what is stored; at least doubles the
    /// mapping, so a region filled a byte at a time remaps a logarithmic number of times.
    /// The kernel refusing pages is treated as malloc failing would be: the process stops.
    public func reserve(_ bytes: Int) {
        guard bytes > capacity else { return }
        var size = max(capacity * 2, Self.pageSize)
        while size < bytes { size *= 2 }
        let mapped: UnsafeMutableRawPointer?
        if let base {
            mapped = cs_mremap(base, capacity, size)
        } else {
            mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        }
        mappings += 1
        guard let mapped, mapped != MAP_FAILED else {
            fatalError("cannot map \(size) bytes of memory: \(String(cString: strerror(errno)))")
        }
        base = mapped
        capacity = size
    }
}
