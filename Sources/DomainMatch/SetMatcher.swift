/// The simple matcher: a hash set of entries per list, probed with each suffix of the
/// name. Right for the parent's lists (a few to a few thousand names, rebuilt on every
/// policy version) and the reference the trie is tested against.
public struct SetMatcher: NameMatcher {
    /// Entry → bit mask of the lists holding it.
    private let masks: [DomainName: UInt16]
    public let listCount: Int

    /// `lists[i]` holds list i's names.
    public init(lists: [[DomainName]]) {
        precondition(lists.count <= MatchDepths.capacity, "too many lists for one matcher")
        var masks: [DomainName: UInt16] = [:]
        for (index, names) in lists.enumerated() {
            for name in names { masks[name, default: 0] |= 1 << UInt16(index) }
        }
        self.masks = masks
        listCount = lists.count
    }

    public func match(_ name: DomainName, into depths: inout MatchDepths) {
        depths = MatchDepths()
        guard !masks.isEmpty else { return }
        // Shortest suffix first, so a deeper hit overwrites a shallower one.
        for labels in 1...name.labelCount {
            guard let mask = masks[name.suffix(labels: labels)] else { continue }
            for list in 0..<listCount where mask & (1 << UInt16(list)) != 0 { depths[list] = labels }
        }
    }
}
