import TestSupport
import Testing

@testable import EventLoop

/// The heap alone: pure, so ordering and cancellation are checked exhaustively here and
/// the loop tests only need to show it is wired in.
@Suite struct TimerHeapTests {
    @Test func popsInDeadlineThenSchedulingOrder() {
        var heap = TimerHeap<String>()
        _ = heap.schedule(at: 30, "c")
        _ = heap.schedule(at: 10, "a1")
        _ = heap.schedule(at: 20, "b")
        _ = heap.schedule(at: 10, "a2")
        #expect(heap.earliestDeadline == 10)
        var fired: [String] = []
        while let action = heap.popDue(now: 25, scheduledBefore: heap.nextSequence) { fired.append(action) }
        #expect(fired == ["a1", "a2", "b"])
        #expect(heap.count == 1 && heap.earliestDeadline == 30)
    }

    @Test func cancelRemovesAtOnceAndStaleHandlesDoNothing() {
        var heap = TimerHeap<Int>()
        let first = heap.schedule(at: 5, 1)
        let second = heap.schedule(at: 1, 2)
        #expect(heap.cancel(second) == 2)
        #expect(heap.cancel(second) == nil)
        #expect(heap.earliestDeadline == 5)
        // The freed slot is reused; the old handle must not cancel the new timer.
        let third = heap.schedule(at: 3, 3)
        #expect(third.slot == second.slot && third != second)
        #expect(heap.cancel(second) == nil)
        #expect(heap.popDue(now: 10, scheduledBefore: .max) == 3)
        #expect(heap.cancel(third) == nil)
        #expect(heap.cancel(first) == 1)
        #expect(heap.isEmpty && heap.earliestDeadline == nil)
    }

    @Test func timersScheduledDuringAPassWaitForTheNext() {
        var heap = TimerHeap<Int>()
        _ = heap.schedule(at: 1, 1)
        let limit = heap.nextSequence
        _ = heap.schedule(at: 0, 2)  // due, but scheduled after the pass began
        #expect(heap.popDue(now: 5, scheduledBefore: limit) == nil)
        #expect(heap.popDue(now: 5, scheduledBefore: heap.nextSequence) == 2)
        #expect(heap.popDue(now: 5, scheduledBefore: heap.nextSequence) == 1)
    }

    @Test func tenThousandRandomTimersWithCancellations() {
        var generator = SplitMix(seed: 42)
        var heap = TimerHeap<Int>()
        var expected: [(deadline: UInt64, id: Int)] = []
        var handles: [TimerHandle] = []
        for id in 0..<10_000 {
            let deadline = generator.next() % 5_000
            handles.append(heap.schedule(at: deadline, id))
            expected.append((deadline, id))
        }
        for id in stride(from: 0, to: 10_000, by: 3) { #expect(heap.cancel(handles[id]) == id) }
        expected.removeAll { $0.id % 3 == 0 }
        expected.sort { $0.deadline != $1.deadline ? $0.deadline < $1.deadline : $0.id < $1.id }
        var fired: [Int] = []
        while let id = heap.popDue(now: .max, scheduledBefore: .max) { fired.append(id) }
        #expect(fired == expected.map(\.id))
    }
}

typealias SplitMix = SeededGenerator
