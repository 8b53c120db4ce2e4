import DomainMatch

/// The canonical category ids of docs/decisions.md#categories, in the table's order: the order in which the
/// decision tries them (docs/decisions.md#the-decision-order, step 5) is this declaration order.
public enum Category: Int, CaseIterable, Sendable, Comparable, CustomStringConvertible {
    case adult, gambling, social, gaming, dating, drugs, violence, piracy, malware, phishing, proxy, ads

    public var id: String {
        switch self {
        case .adult: return "adult"
        case .gambling: return "gambling"
        case .social: return "social"
        case .gaming: return "gaming"
        case .dating: return "dating"
        case .drugs: return "drugs"
        case .violence: return "violence"
        case .piracy: return "piracy"
        case .malware: return "malware"
        case .phishing: return "phishing"
        case .proxy: return "proxy"
        case .ads: return "ads"
        }
    }

    public var description: String { id }

    /// Synonyms used by the API and by list sources, in canonical form (see `canonicalKey`).
    var synonyms: [String] {
        switch self {
        case .adult: return ["porn", "pornography", "sexual", "nsfw"]
        case .gambling: return ["betting", "casino"]
        case .social: return ["social_media", "social_networks", "social_network"]
        case .gaming: return ["games", "online_games"]
        case .dating, .drugs, .malware: return []
        case .violence: return ["weapons", "hate"]
        case .piracy: return ["torrents", "warez"]
        case .phishing: return ["fraud", "scam"]
        case .proxy: return ["vpn", "vpn_dns", "anonymizers", "doh"]
        case .ads: return ["trackers", "advertising"]
        }
    }

    /// An id or a synonym, compared after trimming, ignoring ASCII case and treating
    /// `_`, `-` and space alike (`Social Media` → `.social`). Nil for anything else.
    public init?(name: String) {
        let key = Category.canonicalKey(name)
        guard let match = Category.allCases.first(where: { $0.id == key || $0.synonyms.contains(key) }) else {
            return nil
        }
        self = match
    }

    static func canonicalKey(_ name: String) -> String {
        String(name.policyTrimmed.lowercasedASCII.map { $0 == "-" || $0 == " " ? "_" : $0 })
    }

    public static func < (lhs: Category, rhs: Category) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension String {
    /// Policy strings are compared after trimming white space (docs/decisions.md#categories).
    var policyTrimmed: String { trimmingWhitespace() }

    /// Lowercases ASCII letters only: policy strings are compared ignoring ASCII case, and
    /// nothing else (docs/decisions.md#categories).
    var lowercasedASCII: String {
        String(
            String.UnicodeScalarView(
                unicodeScalars.map { scalar in
                    ("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value | 0x20)! : scalar
                }))
    }
}
