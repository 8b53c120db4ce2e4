import FoundationEssentials

/// One event for the parent (docs/requests-and-notifications.md#notifications), as the JSON
/// webhook receives it and as the queue keeps it. The ntfy format sends the same fields as
/// its body and headers.
public struct Notice: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// A child asked on its page.
        case ask
        /// A device the gateway never saw before asked it something.
        case newDevice = "new_device"
        /// An app's daily budget, or the day's time online, is used up.
        case budgetSpent = "budget_spent"
        /// One device tried to get around the filter more than the threshold in 10 minutes.
        case circumvention
        /// The gateway needs the parent: the sync failing for an hour, lists too old.
        case trouble
        /// A child's day, at `summary_time`.
        case summary
    }

    public var event: Kind
    /// What makes this event once: a second event with the same id is not sent.
    public var id: String
    /// When it happened, Unix seconds.
    public var time: Int64
    public var profile: String?
    /// The device: its MAC address when known, else its address.
    public var device: String?
    public var title: String
    public var message: String
    /// Where a tap on the notification goes: the parent's page.
    public var click: String?
    /// 1 (min) to 5 (max), ntfy's scale; 3 is the default.
    public var priority: Int
    /// ntfy tags (emoji short codes and words).
    public var tags: [String]
    /// The event's facts for automations: a request's id and kind, an app, a count.
    public var data: [String: String]

    public init(
        event: Kind, id: String, time: Int64, profile: String? = nil, device: String? = nil, title: String,
        message: String, click: String? = nil, priority: Int = 3, tags: [String] = [], data: [String: String] = [:]
    ) {
        self.event = event
        self.id = id
        self.time = time
        self.profile = profile.map { Self.clean($0, limit: 100) }
        self.device = device.map { Self.clean($0, limit: 100) }
        self.title = Self.clean(title, limit: 200)
        self.message = Self.clean(message, limit: 2000, keepNewlines: true)
        self.click = click
        self.priority = min(max(priority, 1), 5)
        self.tags = tags
        self.data = data.mapValues { Self.clean($0, limit: 300) }
    }

    /// The object as the JSON webhook receives it: keys sorted, one line.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Every field is a string, a number or a list of strings: encoding cannot fail.
        guard let bytes = try? encoder.encode(self) else { return "{}" }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The notice back from its stored JSON; nil for text that is not one.
    public init?(json: String) {
        guard let decoded = try? JSONDecoder().decode(Notice.self, from: Data(json.utf8)) else { return nil }
        self = decoded
    }

    /// Text from outside (a note, a device's DHCP name, a site's name) without control
    /// characters or bidirectional overrides, at most `limit` characters: what reaches a
    /// phone's notification is what was typed, never a forged second line or header.
    public static func clean(_ text: String, limit: Int, keepNewlines: Bool = false) -> String {
        var out = String.UnicodeScalarView()
        var count = 0
        for scalar in text.unicodeScalars {
            guard count < limit else { break }
            let value = scalar.value
            if keepNewlines, value == 0x0A {
                out.append(scalar)
            } else if value < 0x20 || (0x7F...0x9F).contains(value) {
                out.append(" ")
            } else if (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
                || value == 0x2028 || value == 0x2029
            {
                continue
            } else {
                out.append(scalar)
            }
            count += 1
        }
        return String(out)
    }
}
