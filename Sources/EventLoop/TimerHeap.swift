import SystemIO

/// Names a scheduled timer so it can be cancelled. Stale handles (the timer fired or was
/// cancelled, even if its slot was reused since) are recognised and do nothing.
public struct TimerHandle: Hashable, Sendable {
    let slot: UInt32
    let generation: UInt32
}

/// The loop's pending timers: a binary min-heap ordered by (deadline, scheduling order), so
/// timers with equal deadlines fire in the order they were scheduled.
///
/// Timers live in a slab of slots that remembers each one's heap position, so `cancel` is
/// O(log n) and removes the timer at once (a cancelled timer never holds up the epoll
/// timeout or its closure's captures). Slots and heap entries are reused: once warm,
/// scheduling and cancelling allocate nothing. Pure and single-threaded (no I/O, no clock).
struct TimerHeap<Action> {
    private struct Entry {
        var deadline: Nanoseconds
        var sequence: UInt64
        var slot: UInt32

        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : sequence < other.sequence
        }
    }

    private struct Slot {
        var generation: UInt32 = 0
        /// Position in `heap`, or -1 when the slot is free.
        var position: Int = -1
        var action: Action?
    }

    private var heap: [Entry] = []
    private var slots: [Slot] = []
    private var freeSlots: [UInt32] = []
    /// The sequence number the next timer gets; timers with a smaller one were scheduled earlier.
    private(set) var nextSequence: UInt64 = 0

    var count: Int { heap.count }
    var isEmpty: Bool { heap.isEmpty }
    var earliestDeadline: Nanoseconds? { heap.first?.deadline }

    mutating func schedule(at deadline: Nanoseconds, _ action: Action) -> TimerHandle {
        let slot: UInt32
        if let reused = freeSlots.popLast() {
            slot = reused
        } else {
            slot = UInt32(slots.count)
            slots.append(Slot())
        }
        slots[Int(slot)].action = action
        heap.append(Entry(deadline: deadline, sequence: nextSequence, slot: slot))
        nextSequence += 1
        siftUp(heap.count - 1)
        return TimerHandle(slot: slot, generation: slots[Int(slot)].generation)
    }

    /// Removes the timer; returns its action (nil if it already fired or was cancelled).
    mutating func cancel(_ handle: TimerHandle) -> Action? {
        guard Int(handle.slot) < slots.count else { return nil }
        let slot = slots[Int(handle.slot)]
        guard slot.generation == handle.generation, slot.position >= 0 else { return nil }
        return remove(at: slot.position)
    }

    /// The earliest timer if it is due at `now` and was scheduled before `sequenceLimit`
    /// (so a timer that schedules another already-due timer cannot keep one pass going).
    mutating func popDue(now: Nanoseconds, scheduledBefore sequenceLimit: UInt64) -> Action? {
        guard let first = heap.first, first.deadline <= now, first.sequence < sequenceLimit else { return nil }
        return remove(at: 0)
    }

    private mutating func remove(at position: Int) -> Action? {
        let slot = Int(heap[position].slot)
        let last = heap.removeLast()
        if position < heap.count {
            heap[position] = last
            slots[Int(last.slot)].position = position
            siftDown(siftUp(position))
        }
        let action = slots[slot].action
        slots[slot].action = nil
        slots[slot].position = -1
        slots[slot].generation &+= 1
        freeSlots.append(UInt32(slot))
        return action
    }

    @discardableResult
    private mutating func siftUp(_ start: Int) -> Int {
        var child = start
        let entry = heap[child]
        while child > 0 {
            let parent = (child - 1) / 2
            guard entry.precedes(heap[parent]) else { break }
            heap[child] = heap[parent]
            slots[Int(heap[child].slot)].position = child
            child = parent
        }
        heap[child] = entry
        slots[Int(entry.slot)].position = child
        return child
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        let entry = heap[parent]
        while true {
            var child = 2 * parent + 1
            guard child < heap.count else { break }
            if child + 1 < heap.count, heap[child + 1].precedes(heap[child]) { child += 1 }
            guard heap[child].precedes(entry) else { break }
            heap[parent] = heap[child]
            slots[Int(heap[parent].slot)].position = parent
            parent = child
        }
        heap[parent] = entry
        slots[Int(entry.slot)].position = parent
    }
}
