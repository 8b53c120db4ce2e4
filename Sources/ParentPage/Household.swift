import DomainMatch
import Policy
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
}
