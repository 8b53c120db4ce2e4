import HTTP1
import Policy

/// Why a request was refused, in the vocabulary of docs/decisions.md#the-decision-order: from a `Decision` made here,
/// or read back from the reason text of an Extended DNS Error when the gateway's own
/// resolver blocked the name (a CNAME chain reaching a listed name, docs/dns.md#answer-inspection).
public struct BlockReason: Equatable, Sendable {
    public let reason: Reason
    public let category: Category?
    public let rule: String?
    /// The reason text (`category:adult`, `downtime`, …): `X-Phosra-Block`, hits, logs.
    public let text: String

    public init(_ decision: Decision) {
        reason = decision.reason
        category = decision.category
        rule = decision.rule
        text = decision.reasonText
    }

    /// From a reason text; an unknown text keeps the text with reason `blocked_domain`.
    public init(text: String) {
        self.text = text
        let parts = text.split(separator: ":", maxSplits: 1)
        let head = parts.first.map(String.init) ?? text
        let tail = parts.count > 1 ? String(parts[1]) : nil
        reason = Reason(rawValue: head) ?? .blockedDomain
        category = reason == .category ? tail.flatMap { Category(name: $0) } : nil
        rule = reason == .category ? nil : tail
    }

    /// The decision this block stands for (for a `Hit`).
    public var decision: Decision {
        Decision(.block, reason, rule: rule, category: category)
    }

    /// Where on the child's page (`base`, e.g. `http://gate.home.arpa`) a child asks for what
    /// this block stops (docs/requests-and-notifications.md#asking): time for a pause, a
    /// cutoff or the daily limit, an app's time for a spent budget, else to open `site`.
    /// Nil for the refusals no parent can lift (an address, a port, an unreadable hello).
    public func askURL(base: String, site: String) -> String? {
        switch reason {
        case .paused, .downtime, .schedule, .dailyLimit: return base + "/ask?kind=time"
        case .limit: return base + "/ask?kind=app&app=" + PercentEncoding.component(rule ?? "")
        case .blockedDomain, .category, .service, .sni, .circumvention:
            return base + "/ask?kind=site&name=" + PercentEncoding.component(site)
        case .ipLiteral, .port, .tlsUnreadable, .localDestination, .system, .safeSearch, .allowedDomain, .default,
            .exception:
            return nil
        }
    }

    /// Whether the clock caused it, so the block page says when it ends.
    public var isCutoff: Bool { reason == .downtime || reason == .schedule }

    /// The reason in plain words, for a child reading the block page.
    public var plainWords: String {
        switch reason {
        case .downtime: return "It is downtime: the internet is paused for now."
        case .schedule: return "It is outside the hours when the internet is allowed."
        case .blockedDomain: return "A parent has blocked this site."
        case .circumvention where rule == TargetPolicy.destinationMismatch.rule:
            return "The connection was going to an address that does not belong to this site."
        case .circumvention: return "This site could be used to get around the filter, so it is blocked."
        case .category: return "This site is in a category that is blocked: \(BlockReason.categoryName(category))."
        case .ipLiteral: return "Sites reached by a bare IP address instead of a name are not allowed."
        case .port: return "Connections to this port are not allowed."
        case .sni: return "The secure connection named a site that is blocked."
        case .tlsUnreadable: return "The connection did not say which site it was for, so it was closed."
        case .localDestination: return "This address belongs to the network itself, not to a site."
        case .service: return "A parent has blocked this app."
        case .limit: return "The time a parent allowed for this app today is used up. It opens again at midnight."
        case .dailyLimit: return "Today's time online is used up. The internet opens again at midnight."
        case .paused: return "A parent has paused the internet for now."
        case .system, .safeSearch, .allowedDomain, .default, .exception: return "This site is blocked."
        }
    }

    static func categoryName(_ category: Category?) -> String {
        switch category {
        case .adult?: "adult content"
        case .gambling?: "gambling"
        case .social?: "social media"
        case .gaming?: "games"
        case .dating?: "dating"
        case .drugs?: "drugs"
        case .violence?: "violence and weapons"
        case .piracy?: "piracy"
        case .malware?: "malware"
        case .phishing?: "phishing and scams"
        case .proxy?: "proxies and VPNs"
        case .ads?: "ads and trackers"
        case nil: "none"
        }
    }
}
