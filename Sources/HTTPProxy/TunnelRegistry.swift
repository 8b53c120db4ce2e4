/// The open tunnels of one loop (docs/proxy.md#open-tunnels-follow-the-policy): the loop re-decides each at least once a
/// second and whenever a new snapshot is published, so a tunnel whose host a cutoff or a
/// new policy now blocks is closed within a second — what a DNS filter cannot do, since
/// cached answers and open sockets outlive it. Loop-confined; members leave when closed.
struct TunnelRegistry<Member: AnyObject> {
    private var members: [ObjectIdentifier: Member] = [:]

    var count: Int { members.count }

    mutating func insert(_ member: Member) {
        members[ObjectIdentifier(member)] = member
    }

    mutating func remove(_ member: Member) {
        members.removeValue(forKey: ObjectIdentifier(member))
    }

    /// A copy to walk: visiting a member may close it (and remove it) on the way.
    var snapshot: [Member] { Array(members.values) }
}
