import DomainMatch
import Policy
import Store
import Zoneinfo

/// What the page reads of the running gateway and tells it. The gateway implements it;
/// the page knows nothing of loops, snapshots or the sync.
public protocol Household: AnyObject, Sendable {
    /// The engine in force now: its zone, and its profiles with their rules, minutes and
    /// the parent's overrides.
    func currentEngine() -> DecisionEngine<LabelTrie>
    /// Overrides or devices changed in the store: enforce them from the next query, and
    /// send the change to the API.
    func parentChanged()
    /// A child's request was stored; `words` says what it asks ("More time on TikTok"):
    /// the parent is told (docs/requests-and-notifications.md#notifications).
    func requestAsked(_ request: RequestRow, words: String)
    /// The parent answered a request (after any override the answer made): the gateways
    /// that share this one's state hear of it (docs/two-gateways.md).
    func requestAnswered(_ request: RequestRow)
    /// The parent logged in or out: the gateways that share this one's state hear of it.
    func sessionsChanged()
}

extension Household {
    public func requestAsked(_ request: RequestRow, words: String) {}
    public func requestAnswered(_ request: RequestRow) {}
    public func sessionsChanged() {}
}
