import Base64
import HTTPClient

/// Where notifications go and in what shape (`notify_url`, `notify_format`,
/// `notify_token_file`): an ntfy topic, or any receiver of one JSON object per event.
public struct NotifyTarget: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        /// ntfy's publish: the message as the body, `Title`, `Priority`, `Tags`, `Click`.
        case ntfy
        /// One `Notice` object per POST (Home Assistant's webhook trigger, Gotify's
        /// message API and any automation that reads JSON).
        case json
    }

    public let url: HTTPURL
    public let format: Format
    /// Sent as `Authorization: Bearer`; never logged.
    public let token: String?

    public init(url: HTTPURL, format: Format, token: String?) {
        self.url = url
        self.format = format
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The POST that delivers `notice`.
    public func request(for notice: Notice) -> HTTPRequest {
        var headers: [(String, String)] = []
        if let token { headers.append(("Authorization", "Bearer " + token)) }
        switch format {
        case .json:
            headers.append(("Content-Type", "application/json"))
            return HTTPRequest(method: "POST", url: url, headers: headers, body: Array(notice.json().utf8))
        case .ntfy:
            headers.append(("Content-Type", "text/plain; charset=utf-8"))
            headers.append(("Title", Self.headerText(notice.title)))
            headers.append(("Priority", "\(notice.priority)"))
            let tags = notice.tags.map { Self.headerText($0.filter { $0 != "," }) }.filter { !$0.isEmpty }
            if !tags.isEmpty { headers.append(("Tags", tags.joined(separator: ","))) }
            if let click = notice.click, Self.isPlainASCII(click) { headers.append(("Click", click)) }
            let body = notice.message.isEmpty ? notice.title : notice.message
            return HTTPRequest(method: "POST", url: url, headers: headers, body: Array(body.utf8))
        }
    }

    /// A header value: printable ASCII as it is, anything else as an RFC 2047 encoded word
    /// (`=?UTF-8?B?…?=`), which ntfy decodes; never a CR or LF.
    static func headerText(_ text: String) -> String {
        let flat = Notice.clean(text, limit: 200)
        if isPlainASCII(flat) { return flat }
        return "=?UTF-8?B?" + Base64.encode(Array(flat.utf8)) + "?="
    }

    static func isPlainASCII(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }
}
