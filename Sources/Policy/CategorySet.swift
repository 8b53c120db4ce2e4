import DomainMatch

/// The category lists a gateway has, behind one matcher whose list `i` is the category
/// with raw value `i`. Shared by every profile; built from the lists folder.
public struct CategorySet<Matcher: NameMatcher>: Sendable {
    public let matcher: Matcher
    /// Categories that have at least one list (a selected category without one is
    /// reported `partial`).
    public let present: Set<Category>

    public init(matcher: Matcher, present: Set<Category>) {
        precondition(
            matcher.listCount >= Category.allCases.count || present.isEmpty,
            "a category matcher needs one list per category")
        self.matcher = matcher
        self.present = present
    }
}

extension CategorySet where Matcher == SetMatcher {
    /// Category lists from names, e.g. for tests and small list folders.
    public init(lists: [Category: [DomainName]]) {
        let ordered = Category.allCases.map { lists[$0] ?? [] }
        self.init(matcher: SetMatcher(lists: ordered), present: Set(lists.keys))
    }

    public static var empty: CategorySet<SetMatcher> { CategorySet(lists: [:]) }
}
