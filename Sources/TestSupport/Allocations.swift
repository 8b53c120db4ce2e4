internal import CAllocationCount

/// Heap allocations counted on the calling thread (the test executable's malloc counts
/// them): for tests that show a hot path allocates nothing, by count rather than by time.
public enum Allocations {
    /// Whether allocations are counted in this build: not under a sanitizer, whose runtime
    /// brings its own malloc.
    public static var counted: Bool { cs_allocations_counted() == 1 }

    /// How many allocations `body` made on this thread.
    public static func count(_ body: () throws -> Void) rethrows -> Int {
        try measure(body).count
    }

    /// The bytes of heap `body` allocated on this thread and had not freed when it
    /// returned: what it leaves resident, from the allocator's point of view.
    public static func retainedBytes(_ body: () throws -> Void) rethrows -> Int {
        try measure(body).retainedBytes
    }

    /// The size in bytes of the biggest single allocation `body` made on this thread: for
    /// tests that a path never holds a whole collection at once.
    public static func largest(_ body: () throws -> Void) rethrows -> Int {
        try measure(body).largest
    }

    /// One counted run of `body`; counting stops when it returns or throws.
    private static func measure(
        _ body: () throws -> Void
    ) rethrows -> (count: Int, retainedBytes: Int, largest: Int) {
        cs_allocations_begin()
        defer { _ = cs_allocations_end() }
        try body()
        let count = Int(cs_allocations_end())
        return (count, Int(cs_allocations_net_bytes()), Int(cs_allocations_largest()))
    }
}
