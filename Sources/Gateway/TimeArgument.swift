import Zoneinfo

/// `--at TIME` (ISO 8601): with `Z` or an offset it is that instant; without, wall-clock
/// time in the zone, where a time that occurs twice takes the earlier offset and one that
/// does not exist is an error.
package enum TimeArgument {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Unix seconds for `text`.
    package static func parse(_ text: String, zone: ZoneRules) throws(Failure) -> Int64 {
        var rest = Array(text.utf8)[...]
        func number(_ digits: Int) -> Int? {
            guard rest.count >= digits, rest.prefix(digits).allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            defer { rest = rest.dropFirst(digits) }
            return rest.prefix(digits).reduce(0) { $0 * 10 + Int($1 - 48) }
        }
        func take(_ byte: UInt8) -> Bool {
            guard rest.first == byte else { return false }
            rest = rest.dropFirst()
            return true
        }
        let bad = Failure(
            description:
                "\"\(text)\" is not an ISO 8601 time (e.g. 2026-03-31T21:45, 2026-03-31T21:45:00+02:00, 2026-03-31T19:45Z)"
        )
        guard let year = number(4), take(UInt8(ascii: "-")), let month = number(2), take(UInt8(ascii: "-")),
            let day = number(2)
        else { throw bad }
        var hour = 0
        var minute = 0
        var second = 0
        if take(UInt8(ascii: "T")) || take(UInt8(ascii: "t")) || take(UInt8(ascii: " ")) {
            guard let h = number(2), take(UInt8(ascii: ":")), let m = number(2) else { throw bad }
            hour = h
            minute = m
            if take(UInt8(ascii: ":")) {
                guard let s = number(2) else { throw bad }
                second = s
                if take(UInt8(ascii: ".")) || take(UInt8(ascii: ",")) {
                    // Fractions of a second do not change a minute-based decision.
                    guard rest.first.map({ $0 >= 48 && $0 <= 57 }) == true else { throw bad }
                    while let digit = rest.first, digit >= 48, digit <= 57 { rest = rest.dropFirst() }
                }
            }
        }
        let local = LocalDateTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard local.isValid else { throw Failure(description: "\"\(text)\" is not a valid date and time") }

        var offset: Int?
        if take(UInt8(ascii: "Z")) || take(UInt8(ascii: "z")) {
            offset = 0
        } else if let sign = rest.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
            rest = rest.dropFirst()
            guard let hours = number(2) else { throw bad }
            _ = take(UInt8(ascii: ":"))
            let minutes = rest.isEmpty ? 0 : number(2)
            guard let minutes, hours < 24, minutes < 60 else { throw bad }
            offset = (hours * 3600 + minutes * 60) * (sign == UInt8(ascii: "-") ? -1 : 1)
        }
        guard rest.isEmpty else { throw bad }

        if let offset {
            let days = Int64(CivilCalendar.days(year: year, month: month, day: day))
            return days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offset)
        }
        switch zone.resolve(local) {
        case .unique(let instant): return instant
        case .ambiguous(let earlier, _): return earlier
        case .skipped:
            throw Failure(description: "\"\(text)\" does not exist in \(zone.name) (the clocks skip it)")
        }
    }
}
