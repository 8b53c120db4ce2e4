/// The connections of one loop that have reached an origin, tunnels and plain HTTP
/// (docs/proxy.md#open-connections-follow-the-policy): the loop re-decides each at least
/// once a second and whenever a new snapshot is published, so one whose host a cutoff or
/// a new policy now blocks ends within a second — what a DNS filter cannot do, since
/// cached answers and open sockets outlive it. Loop-confined; members leave when closed.
///
/// The members are visited in rounds, a bounded batch at a time (`nextBatch`), so the
/// loop answers DNS queries between two batches however many are open
/// (docs/performance.md#bounded-loop-work). Members are kept in an array whose first
/// `cursor` slots are the ones this round has visited; insertions and removals keep that
/// split, so a round visits each member present throughout it exactly once.
struct FollowedConnections<Member: AnyObject> {
    private var members: [Member] = []
    private var positions: [ObjectIdentifier: Int] = [:]
    /// Members before it were visited in the current round.
    private var cursor = 0

    var count: Int { members.count }

    /// Whether the current round has visited every member (also when there is none).
    var roundFinished: Bool { cursor >= members.count }

    /// Joins the round in progress (as not yet visited).
    mutating func insert(_ member: Member) {
        let id = ObjectIdentifier(member)
        guard positions[id] == nil else { return }
        positions[id] = members.count
        members.append(member)
    }

    mutating func remove(_ member: Member) {
        guard var at = positions[ObjectIdentifier(member)] else { return }
        if at < cursor {
            // Visited: trade places with the last visited one, which the cursor then gives
            // up, so the hole is in the unvisited part.
            cursor -= 1
            swapAt(at, cursor)
            at = cursor
        }
        swapAt(at, members.count - 1)
        members.removeLast()
        positions[ObjectIdentifier(member)] = nil
    }

    /// The next at most `limit` members this round has not visited, now counted as visited.
    /// A copy to walk: visiting a member may close it (and remove it) on the way.
    mutating func nextBatch(limit: Int) -> [Member] {
        let end = min(members.count, cursor + limit)
        defer { cursor = end }
        return Array(members[cursor..<end])
    }

    /// Starts a new round: every member is unvisited again.
    mutating func startRound() { cursor = 0 }

    private mutating func swapAt(_ first: Int, _ second: Int) {
        guard first != second else { return }
        members.swapAt(first, second)
        positions[ObjectIdentifier(members[first])] = first
        positions[ObjectIdentifier(members[second])] = second
    }
}
