import Store
import Zoneinfo

/// A child's day as an SVG bar chart drawn on the gateway: one slot per hour from local
/// midnight to the next (23 or 25 on the days the clocks change), queries as a light bar
/// and blocks as a dark one in front of it, each slot titled with its numbers. Colours come
/// from the stylesheet's classes (the CSP allows no inline style).
enum DayChart {
    static let width = 720
    static let height = 180
    static let axis = 20

    /// The chart of `hours` (any subset of the day's hours) for the local day starting at
    /// `midnight` and ending at `nextMidnight`.
    static func svg(hours: [DayHour], midnight: Int64, nextMidnight: Int64, zone: ZoneRules) -> String {
        // Counts are kept per hour of UTC; in a zone half an hour off, the slots are those
        // hours, labelled with their local start.
        let first = midnight - midnight % 3_600
        let slots = max(1, Int((nextMidnight - first + 3_599) / 3_600))
        var byStart: [Int64: DayHour] = [:]
        for hour in hours { byStart[hour.hourStart] = hour }
        let peak = max(1, hours.map(\.queries).max() ?? 1, hours.map(\.blocks).max() ?? 1)
        let plot = height - axis
        let slot = Double(width) / Double(slots)
        let bar = max(1, slot * 0.7)
        var svg =
            "<svg class=\"day\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" "
            + "aria-label=\"Queries and blocks per hour\" xmlns=\"http://www.w3.org/2000/svg\">"
        svg += "<line class=\"axis\" x1=\"0\" y1=\"\(plot)\" x2=\"\(width)\" y2=\"\(plot)\"/>"
        for index in 0..<slots {
            let start = first + Int64(index) * 3_600
            let local = zone.localDateTime(at: start)
            var label = local.hour < 10 ? "0\(local.hour)" : "\(local.hour)"
            label += local.minute == 0 ? ":00" : local.minute < 10 ? ":0\(local.minute)" : ":\(local.minute)"
            let counts = byStart[start] ?? DayHour(hourStart: start, queries: 0, blocks: 0)
            let x = Double(index) * slot + (slot - bar) / 2
            let queries = Double(plot) * Double(counts.queries) / Double(peak)
            let blocks = Double(plot) * Double(counts.blocks) / Double(peak)
            svg += "<g><title>\(label) — \(counts.queries) queries, \(counts.blocks) blocked</title>"
            svg += rect("q", x: x, y: Double(plot) - queries, width: bar, height: queries)
            svg += rect("b", x: x, y: Double(plot) - blocks, width: bar, height: blocks)
            svg += "</g>"
            if local.hour % 3 == 0 {
                svg +=
                    "<text x=\(quoted(x + bar / 2)) y=\"\(height - 4)\" text-anchor=\"middle\">\(label.prefix(2))</text>"
            }
        }
        return svg + "</svg>"
    }

    private static func rect(_ kind: String, x: Double, y: Double, width: Double, height: Double) -> String {
        "<rect class=\"\(kind)\" x=\(quoted(x)) y=\(quoted(y)) width=\(quoted(width)) height=\(quoted(height))/>"
    }

    /// A coordinate with one decimal, quoted: short, and the same on every machine.
    private static func quoted(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\"\(tenths / 10).\(abs(tenths % 10))\""
    }
}
