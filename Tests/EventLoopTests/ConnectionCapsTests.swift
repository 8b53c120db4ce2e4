import EventLoop
import Synchronization
import TestSupport
import Testing

/// A connection for the caps' tests: counts how often it was asked to go, on which thread.
private final class Held: Sheddable, @unchecked Sendable {
    // Sendable: `shed` runs on the loop thread; the test reads the atomics.
    let loop: EventLoop
    let shedCount = Atomic<Int>(0)
    let offLoop = Atomic<Int>(0)

    init(loop: EventLoop) { self.loop = loop }

    func shed() {
        if !loop.inEventLoop { offLoop.add(1, ordering: .relaxed) }
        shedCount.add(1, ordering: .relaxed)
    }
}

/// A connection that says when it is shed and when freed: the slot holds it strongly from
/// `attach`, and must let go when released or when a shed takes it, or the two would keep
/// each other alive.
private final class Tracked: Sheddable, @unchecked Sendable {
    // Sendable: only the `Shared` counters are touched, from any thread.
    let freed: Shared<Int>
    let sheds: Shared<Int>

    init(freed: Shared<Int>, sheds: Shared<Int>) {
        self.freed = freed
        self.sheds = sheds
    }

    func shed() { sheds.update { $0 += 1 } }

    deinit { freed.update { $0 += 1 } }
}

@Suite struct ConnectionCapsTests {
    typealias Caps = ConnectionCaps<String>

    /// Admits a connection of `key` at instant `now` and attaches a `Held` to it.
    private func admit(
        _ caps: Caps, _ key: String, on loop: EventLoop, at now: UInt64
    ) throws -> (CapSlot<String>, Held)? {
        try loop.sync {
            guard case .success(let slot) = caps.admit(key, on: loop, now: now) else { return nil }
            let held = Held(loop: loop)
            slot.attach(held)
            return (slot, held)
        }
    }

    @Test func atTheClientCapItsOwnOldestIdleConnectionIsShed() throws {
        try withLoops { group in
            let loop = group.loops[0]
            let caps = Caps(.init(perClient: 2, total: 0, shedAtClientCap: true))
            let first = try #require(try admit(caps, "a", on: loop, at: 10))
            let second = try #require(try admit(caps, "a", on: loop, at: 20))
            let other = try #require(try admit(caps, "b", on: loop, at: 5))
            let third = try #require(try admit(caps, "a", on: loop, at: 30))
            #expect(waitUntil { first.1.shedCount.load(ordering: .relaxed) == 1 })
            #expect(second.1.shedCount.load(ordering: .relaxed) == 0)
            #expect(other.1.shedCount.load(ordering: .relaxed) == 0, "another client's older connection stays")
            #expect(first.1.offLoop.load(ordering: .relaxed) == 0, "shed on its own loop")
            #expect(caps.count(of: "a") == 2 && caps.count() == 3 && caps.shedCount == 1)
            // The shed connection closes and releases: nothing changes twice.
            caps.release(first.0)
            #expect(caps.count(of: "a") == 2)
            _ = (third, second)
        }
    }

    /// A client's slots are kept by identity: closing one in any order, or twice, touches
    /// only its own entry; of connections idle since the same instant, the first admitted
    /// is shed.
    @Test func closingInAnyOrderKeepsTheCountsAndTiesShedTheFirstAdmitted() throws {
        try withLoops { group in
            let loop = group.loops[0]
            let caps = Caps(.init(perClient: 64, total: 0, shedAtClientCap: true))
            var held: [(CapSlot<String>, Held)] = []
            for _ in 0..<64 { held.append(try #require(try admit(caps, "a", on: loop, at: 7))) }
            let odd = Array(stride(from: 1, to: 64, by: 2))
            for index in odd.reversed() { caps.release(held[index].0) }
            #expect(caps.count(of: "a") == 32 && caps.count() == 32)
            for index in odd { caps.release(held[index].0) }
            #expect(caps.count(of: "a") == 32, "a second release changes nothing")
            for _ in 0..<32 { held.append(try #require(try admit(caps, "a", on: loop, at: 7))) }
            let newcomer = try #require(try admit(caps, "a", on: loop, at: 7))
            #expect(waitUntil { held[0].1.shedCount.load(ordering: .relaxed) == 1 })
            #expect(held.dropFirst().allSatisfy { $0.1.shedCount.load(ordering: .relaxed) == 0 })
            #expect(caps.count(of: "a") == 64 && caps.shedCount == 1)
            for entry in held + [newcomer] { caps.release(entry.0) }
            #expect(caps.count(of: "a") == 0 && caps.count() == 0)
        }
    }

    @Test func aBusyConnectionIsNeverShedAndWithNoneIdleTheNewcomerIsRefused() throws {
        try withLoops { group in
            let loop = group.loops[0]
            let caps = Caps(.init(perClient: 0, total: 2, shedAtClientCap: true))
            let first = try #require(try admit(caps, "a", on: loop, at: 10))
            let second = try #require(try admit(caps, "b", on: loop, at: 20))
            first.0.markBusy()
            // The oldest sheddable one is the second.
            let third = try #require(try admit(caps, "c", on: loop, at: 30))
            #expect(waitUntil { second.1.shedCount.load(ordering: .relaxed) == 1 })
            #expect(first.1.shedCount.load(ordering: .relaxed) == 0)
            third.0.markBusy()
            #expect(try loop.sync { caps.admit("d", on: loop, now: 40) } == .failure(.total))
            // A connection that becomes idle keeps the earlier of its instants.
            first.0.markSheddable(since: 50)
            first.0.markSheddable(since: 60)
            let fourth = try #require(try admit(caps, "d", on: loop, at: 70))
            #expect(waitUntil { first.1.shedCount.load(ordering: .relaxed) == 1 })
            _ = fourth
        }
    }

    /// docs/proxy.md#who-is-served: at the total cap the longest-idle connection of the
    /// client holding the most goes, even when another's has waited longer; a client with
    /// nothing sheddable passes to the next; once nobody holds more than the newcomer would,
    /// the longest-idle of anyone.
    @Test func atTheTotalCapTheClientHoldingTheMostLosesItsLongestIdle() throws {
        try withLoops { group in
            let loop = group.loops[0]
            let caps = Caps(.init(perClient: 0, total: 8, shedAtClientCap: true))
            let many = try (1...4).map { try #require(try admit(caps, "many", on: loop, at: 10 * UInt64($0))) }
            let busy = try (1...2).map { _ in try #require(try admit(caps, "busy", on: loop, at: 1)) }
            let few = try (1...2).map { try #require(try admit(caps, "few", on: loop, at: 2 + UInt64($0))) }
            for slot in busy { slot.0.markBusy() }
            // A tunnel: idle since its last byte, a later instant replacing an earlier one.
            many[0].0.markIdle(since: 5)
            many[0].0.markIdle(since: 45)
            _ = try #require(try admit(caps, "new", on: loop, at: 50))
            #expect(waitUntil { many[1].1.shedCount.load(ordering: .relaxed) == 1 }, "many's longest idle")
            _ = try #require(try admit(caps, "new", on: loop, at: 51))
            #expect(waitUntil { many[2].1.shedCount.load(ordering: .relaxed) == 1 })
            // many 2, busy 2 (nothing sheddable), few 2, new 2: nobody holds more than 3.
            _ = try #require(try admit(caps, "new", on: loop, at: 52))
            #expect(waitUntil { few[0].1.shedCount.load(ordering: .relaxed) == 1 }, "the longest idle of anyone")
            #expect(busy.allSatisfy { $0.1.shedCount.load(ordering: .relaxed) == 0 })
            #expect(many[0].1.shedCount.load(ordering: .relaxed) == 0 && caps.count() == 8 && caps.shedCount == 3)
        }
    }

    /// A connection counted under a second key too (the proxy's device by MAC address, also
    /// by its address): the per-client cap holds the second key whatever the first.
    @Test func aSecondKeyIsHeldToThePerClientCapToo() throws {
        try withLoops { group in
            let loop = group.loops[0]
            let caps = Caps(.init(perClient: 2, total: 0, shedAtClientCap: false))
            func admit(_ key: String, _ second: String?) throws -> Result<CapSlot<String>, Caps.Refusal> {
                try loop.sync { caps.admit(key, alsoCountedAs: second, on: loop, now: 1) }
            }
            guard case .success(let first) = try admit("mac-a", "10.0.0.7") else { throw CapsTestError.refused }
            guard case .success = try admit("mac-b", "10.0.0.7") else { throw CapsTestError.refused }
            #expect(try admit("mac-c", "10.0.0.7") == .failure(.perClient), "the address's share is taken")
            #expect(caps.count(alsoCountedAs: "10.0.0.7") == 2 && caps.count(of: "mac-c") == 0)
            guard case .success = try admit("mac-c", "10.0.0.8") else { throw CapsTestError.refused }
            caps.release(first)
            caps.release(first)
            #expect(caps.count(alsoCountedAs: "10.0.0.7") == 1, "released once")
            guard case .success = try admit("mac-c", "10.0.0.7") else { throw CapsTestError.refused }
        }
    }

    @Test func withoutSheddingAtTheClientCapTheNewcomerIsRefused() throws {
        try withLoops { group in
            let loop = group.loops[0]
            let caps = Caps(.init(perClient: 1, total: 0, shedAtClientCap: false))
            let first = try #require(try admit(caps, "a", on: loop, at: 10))
            #expect(try loop.sync { caps.admit("a", on: loop, now: 20) } == .failure(.perClient))
            caps.release(first.0)
            caps.release(first.0)
            #expect(caps.count() == 0)
            #expect(try admit(caps, "a", on: loop, at: 30) != nil)
            #expect(first.1.shedCount.load(ordering: .relaxed) == 0)
        }
    }

    @Test func aSlotHoldsItsConnectionUntilReleasedOrShed() throws {
        try withLoops { group in
            let loop = group.loops[0]
            let caps = Caps(.init(perClient: 1, total: 0, shedAtClientCap: true))
            let (freed, sheds) = (Shared(0), Shared(0))
            /// Admits `key` with a `Tracked` attached, held by the slot alone.
            func admitTracked(_ key: String, at now: UInt64) throws -> CapSlot<String> {
                try #require(
                    try loop.sync { () -> CapSlot<String>? in
                        guard case .success(let slot) = caps.admit(key, on: loop, now: now) else { return nil }
                        slot.attach(Tracked(freed: freed, sheds: sheds))
                        return slot
                    })
            }
            // Released: the slot lets go of its connection.
            let kept = try admitTracked("a", at: 1)
            #expect(freed.value == 0, "held by the slot")
            caps.release(kept)
            #expect(freed.value == 1)
            caps.release(kept)
            // Shed: the shed takes the connection, sheds it and lets go of it, though its slot
            // is still referenced here and was never released.
            let victim = try admitTracked("b", at: 2)
            let newcomer = try admitTracked("b", at: 3)
            #expect(waitUntil { freed.value == 2 })
            #expect(sheds.value == 1 && caps.count(of: "b") == 1)
            // Released before the shed asked for runs (it is queued behind this task): the
            // connection is let go of, and the shed finds nothing to shed.
            try loop.sync {
                guard case .success(let third) = caps.admit("b", on: loop, now: 4) else { return }
                caps.release(newcomer)
                caps.release(third)
            }
            #expect(freed.value == 3 && caps.count() == 0 && caps.shedCount == 2)
            try loop.sync {}
            #expect(sheds.value == 1, "the newcomer, released, was not shed")
            _ = victim
        }
    }

    @Test func connectionsOnSeveralLoopsCountTogetherAndAreShedOnTheirOwn() throws {
        try withLoops(2) { group in
            let caps = Caps(.init(perClient: 0, total: 2, shedAtClientCap: true))
            let onFirst = try #require(try admit(caps, "a", on: group.loops[0], at: 10))
            let onSecond = try #require(try admit(caps, "a", on: group.loops[1], at: 20))
            let newcomer = try #require(try admit(caps, "b", on: group.loops[1], at: 30))
            #expect(waitUntil { onFirst.1.shedCount.load(ordering: .relaxed) == 1 })
            #expect(onFirst.1.offLoop.load(ordering: .relaxed) == 0)
            #expect(caps.count() == 2)
            _ = (onSecond, newcomer)
        }
    }
}

extension Result<CapSlot<String>, ConnectionCaps<String>.Refusal> {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.failure(let left), .failure(let right)): left == right
        case (.success(let left), .success(let right)): left === right
        default: false
        }
    }
}

private enum CapsTestError: Error { case refused }
