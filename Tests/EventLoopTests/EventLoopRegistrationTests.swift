import CSystem
import EventLoop
import Glibc
import SystemIO
import TestSupport
import Testing

/// Records what the loop reports for one descriptor. Loop-confined; read via `sync`.
private final class Recorder: Selectable, @unchecked Sendable {
    var calls: [String] = []
    var onReadable: (() -> Void)?

    func readable() {
        calls.append("readable")
        onReadable?()
    }

    func writable() { calls.append("writable") }
    func hangup() { calls.append("hangup") }
}

private func makePipe() -> (read: Int32, write: Int32) {
    var ends: [Int32] = [-1, -1]
    precondition(cs_pipe2(&ends) == 0)
    return (ends[0], ends[1])
}

@Suite struct EventLoopRegistrationTests {
    @Test func interestSelectsWhatIsReportedAndHangupAlwaysArrives() throws {
        try withLoops { group in
            let loop = group.loops[0]
            let (readEnd, writeEnd) = makePipe()
            defer { close(readEnd) }
            let recorder = Recorder()
            try loop.sync { try loop.register(readEnd, interest: .none, handler: recorder) }
            _ = write(writeEnd, "x", 1)
            // One loop iteration after the write: its epoll_wait saw the pipe readable, and
            // events are dispatched before tasks, so a report would be in by the second sync.
            try loop.sync {}
            #expect(try loop.sync { recorder.calls }.isEmpty)  // input waiting, but not asked for
            try loop.sync { try loop.setInterest(.read, for: readEnd) }
            #expect(waitUntil { (try? loop.sync { recorder.calls.contains("readable") }) == true })
            try loop.sync {
                var byte: UInt8 = 0
                _ = read(readEnd, &byte, 1)
                try loop.setInterest(.none, for: readEnd)
                recorder.calls.removeAll()
            }
            close(writeEnd)  // EPOLLHUP on the read end, whatever the interest
            #expect(waitUntil { (try? loop.sync { recorder.calls.contains("hangup") }) == true })
            #expect(
                try loop.sync { () -> Interest? in
                    try loop.deregister(readEnd)
                    return loop.interest(for: readEnd)
                } == nil)
            #expect(throws: SystemError("epoll_ctl(DEL)", errno: ENOENT, subject: "fd \(readEnd)")) {
                try loop.sync { try loop.deregister(readEnd) }
            }
        }
    }

    /// Two descriptors ready in the same wake-up; whichever handler runs first closes the
    /// other and registers a fresh descriptor (usually given the same number). The event
    /// already collected for the closed one must reach nobody.
    @Test func staleEventsOfAnEndedRegistrationAreDropped() throws {
        try withLoops { group in
            let loop = group.loops[0]
            let pipes = [makePipe(), makePipe()]
            let recorders = [Recorder(), Recorder()]
            let fresh = Recorder()
            let replaced = Shared<(old: Int32, new: Int32, newWrite: Int32)?>(nil)
            try loop.sync {
                for side in 0..<2 {
                    recorders[side].onReadable = {
                        var byte: UInt8 = 0
                        _ = read(pipes[side].read, &byte, 1)
                        guard replaced.value == nil else { return }
                        let other = pipes[1 - side]
                        try? loop.deregister(other.read)
                        close(other.read)
                        close(other.write)
                        let newPipe = makePipe()
                        try? loop.register(newPipe.read, interest: .read, handler: fresh)
                        replaced.update { $0 = (other.read, newPipe.read, newPipe.write) }
                    }
                    try loop.register(pipes[side].read, interest: .none, handler: recorders[side])
                }
                for pipe in pipes { _ = write(pipe.write, "x", 1) }
                // Both become readable in one epoll_wait.
                for pipe in pipes { try loop.setInterest(.read, for: pipe.read) }
            }
            #expect(waitUntil { replaced.value != nil })
            // The stale event was in the same batch as the one that replaced it; the batch
            // is dispatched whole before this task runs.
            let (calls, freshCalls) = try loop.sync { (recorders.map(\.calls.count), fresh.calls) }
            // Both events came in one epoll_wait: the first handler ran, the other's was dropped.
            #expect(calls.sorted() == [0, 1])
            #expect(freshCalls.isEmpty, "the new descriptor has no input: only a stale event could call it")
            try loop.sync {
                let survivor = pipes[calls[0] == 1 ? 0 : 1]
                try loop.deregister(survivor.read)
                close(survivor.read)
                close(survivor.write)
                if let (_, new, newWrite) = replaced.value {
                    try loop.deregister(new)
                    close(new)
                    close(newWrite)
                }
            }
        }
    }

    /// `forget` drops a registration without a system call, for a descriptor closed next.
    /// Even when its socket stays open elsewhere (a `dup`, as a forked child holds until it
    /// execs) and epoll keeps reporting it, those reports reach neither the forgotten
    /// handler nor the fresh registration that reuses the descriptor number.
    @Test func aForgottenDescriptorIsClosedWithoutAnEpollCallAndItsReportsAreDropped() throws {
        try withLoops { group in
            let loop = group.loops[0]
            let old = makePipe()
            let forgotten = Recorder()
            let fresh = Recorder()
            let (held, reused, freshWrite, calls) = try loop.sync { () -> (Int32, Int32, Int32, Int) in
                try loop.register(old.read, interest: .read, handler: forgotten)
                _ = write(old.write, "x", 1)  // readable until read: reported on every wait
                let before = loop.controlCalls
                loop.forget(old.read)
                loop.forget(old.read)  // not registered any more: ignored
                let held = dup(old.read)
                close(old.read)
                let new = makePipe()
                try loop.register(new.read, interest: .read, handler: fresh)
                return (held, new.read, new.write, loop.controlCalls - before)
            }
            #expect(calls == 1, "only the fresh registration's epoll_ctl(ADD)")
            #expect(reused == old.read, "the lowest free number: the forgotten one")
            // Several turns in which epoll reports the old socket, still open through `held`.
            for _ in 0..<5 { try loop.sync {} }
            #expect(try loop.sync { (forgotten.calls, fresh.calls) } == ([], []))
            _ = write(freshWrite, "y", 1)
            #expect(waitUntil { (try? loop.sync { fresh.calls.contains("readable") }) == true })
            #expect(try loop.sync { forgotten.calls }.isEmpty)
            try loop.sync {
                try loop.deregister(reused)
                for descriptor in [reused, freshWrite, held, old.write] { close(descriptor) }
            }
        }
    }
}
