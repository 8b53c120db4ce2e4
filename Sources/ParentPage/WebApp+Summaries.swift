import Store

/// The Summaries page: each child's daily summaries of the last 30 days, newest first
/// (docs/requests-and-notifications.md#the-daily-summary).
extension WebApp {
    /// The first local day still shown: 30 days back from today.
    var summaryHorizon: Int { household.currentEngine().zone.localDateTime(at: now).daysSince1970 - 29 }

    func summariesPage(csrf: String) throws -> String {
        let rows = try store.summaries(sinceDay: summaryHorizon)
        var body = "<h2>Daily summaries</h2>"
        let shown = rows.compactMap { DaySummary(json: $0.body) }
        if shown.isEmpty {
            body += "<p class=\"muted\">None yet: each child's day is summed up at summary_time (20:00 unless set).</p>"
        }
        for summary in shown { body += summary.html }
        return Pages.document(title: "Summaries", body: body, csrf: csrf)
    }
}
