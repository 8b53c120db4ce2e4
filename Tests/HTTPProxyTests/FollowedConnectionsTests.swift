import TestFixtures
import TestSupport
import Testing

@testable import HTTPProxy

/// Open tunnels are re-decided in rounds of bounded batches: however many are open, one
/// batch is all a loop does between two of its answers, and a round still visits each
/// tunnel exactly once, whatever opens and closes meanwhile (counted, not timed).
@Suite(.blocking) struct FollowedConnectionsTests {
    final class Tunnel {
        let id: Int
        init(_ id: Int) { self.id = id }
    }

    @Test func aRoundVisitsEveryTunnelOnceInBatchesOfAtMostTheLimit() {
        var registry = FollowedConnections<Tunnel>()
        let tunnels = (0..<1000).map(Tunnel.init)
        for tunnel in tunnels { registry.insert(tunnel) }
        var visited: [Int] = []
        var batches = 0
        while !registry.roundFinished {
            let batch = registry.nextBatch(limit: 32)
            #expect(!batch.isEmpty && batch.count <= 32)
            visited += batch.map(\.id)
            batches += 1
        }
        #expect(batches == 32)  // 31 full batches and one of 8
        #expect(visited.sorted() == Array(0..<1000))
        registry.startRound()
        #expect(!registry.roundFinished)
    }

    @Test func closingAndOpeningDuringARoundSkipNoOneAndRepeatNoOne() {
        var registry = FollowedConnections<Tunnel>()
        var open = (0..<200).map(Tunnel.init)
        for tunnel in open { registry.insert(tunnel) }
        var visited: [Int] = []
        var next = 200
        var generator = SeededGenerator(seed: 17)
        while !registry.roundFinished {
            let batch = registry.nextBatch(limit: 7)
            visited += batch.map(\.id)
            // Between batches: some visited and some unvisited tunnels close, others open.
            for _ in 0..<3 where !open.isEmpty {
                let closing = open.remove(at: Int.random(in: 0..<open.count, using: &generator))
                registry.remove(closing)
            }
            let opened = Tunnel(next)
            next += 1
            open.append(opened)
            registry.insert(opened)
            if next > 400 { break }
        }
        #expect(Set(visited).count == visited.count, "no tunnel visited twice in a round")
        // Everything still open that was open throughout (ids below 200) was visited.
        let survivors = open.map(\.id).filter { $0 < 200 }
        #expect(survivors.allSatisfy(Set(visited).contains), "\(survivors.filter { !visited.contains($0) })")
        #expect(registry.count == open.count)
    }

    @Test func aClosedTunnelIsGoneAndClosingTwiceIsHarmless() {
        var registry = FollowedConnections<Tunnel>()
        let (first, second) = (Tunnel(1), Tunnel(2))
        registry.insert(first)
        registry.insert(second)
        registry.remove(first)
        registry.remove(first)
        #expect(registry.count == 1)
        #expect(registry.nextBatch(limit: 32).map(\.id) == [2])
        #expect(registry.roundFinished)
    }
}
