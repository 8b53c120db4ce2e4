/// A POSIX TZ rule string such as `CET-1CEST,M3.5.0,M10.5.0/3`, as used in the TZ
/// environment variable and in the footer of TZif v2+ files.
///
/// Grammar (POSIX, with the RFC 8536 §3.3.1 extension that a change time's hours may
/// be -167...167): `std offset [dst [offset] [,start[/time],end[/time]]]`.
/// Names are three or more letters, or `<…>` holding three or more of `A-Z a-z 0-9 + -`.
/// Offsets are `[+|-]hh[:mm[:ss]]` with hours 0...24 and count hours *west* of UTC;
/// a missing dst offset is one hour ahead of std. A dst without a rule uses the US
/// default `M3.2.0,M11.1.0` (changes at 02:00).
struct PosixTZ: Sendable, Equatable {
    /// One of the two local times a rule switches between.
    struct Zone: Sendable, Equatable {
        let abbreviation: String
        /// Seconds east of UTC (the opposite sign of the TZ string).
        let offset: Int32
    }

    /// The day of a change within a year.
    enum Day: Sendable, Equatable {
        /// `Jn`: day 1...365, where 29 February is never counted (J60 is always 1 March).
        case julianNoLeap(Int)
        /// `n`: zero-based day 0...365 of the year, 29 February counted.
        case zeroBased(Int)
        /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (1...5, 5 = last) of month `m`.
        case monthWeek(month: Int, week: Int, weekday: Int)
    }

    /// A change: a day and a time of day on the local clock in force *before* it.
    struct Change: Sendable, Equatable {
        let day: Day
        /// Seconds after local midnight, -167 h ... 167 h.
        let time: Int32
    }

    struct Daylight: Sendable, Equatable {
        let zone: Zone
        let start: Change
        let end: Change
    }

    let text: String
    let standard: Zone
    /// Nil when the string names no daylight-saving time.
    let daylight: Daylight?

    init(_ text: String) throws(ZoneError) {
        var p = Parser(text: text)
        let standard = Zone(abbreviation: try p.name(), offset: try p.offset())
        var daylight: Daylight?
        if !p.atEnd {
            let name = try p.name()
            var offset = standard.offset + 3600
            if !p.atEnd && p.peek != UInt8(ascii: ",") { offset = try p.offset() }
            let start: Change
            let end: Change
            if p.atEnd {
                start = Change(day: .monthWeek(month: 3, week: 2, weekday: 0), time: 7200)
                end = Change(day: .monthWeek(month: 11, week: 1, weekday: 0), time: 7200)
            } else {
                try p.expect(",")
                start = try p.change()
                try p.expect(",")
                end = try p.change()
            }
            daylight = Daylight(zone: Zone(abbreviation: name, offset: offset), start: start, end: end)
        }
        guard p.atEnd else { throw p.failure("unexpected text after the rule") }
        self.text = text
        self.standard = standard
        self.daylight = daylight
    }
}

/// A cursor over the ASCII bytes of a TZ string; every error names the byte position.
private struct Parser {
    let text: String
    let bytes: [UInt8]
    var index = 0

    init(text: String) {
        self.text = text
        self.bytes = Array(text.utf8)
    }

    var atEnd: Bool { index == bytes.count }
    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    func failure(_ what: String) -> ZoneError {
        .badPosixTZ(text, reason: "\(what) at offset \(index)")
    }

    mutating func expect(_ character: Unicode.Scalar) throws(ZoneError) {
        guard peek == UInt8(ascii: character) else { throw failure("expected '\(character)'") }
        index += 1
    }

    mutating func name() throws(ZoneError) -> String {
        let quoted = peek == UInt8(ascii: "<")
        if quoted { index += 1 }
        let start = index
        while let c = peek, isLetter(c) || (quoted && (isDigit(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: "-")))
        {
            index += 1
        }
        let name = String(decoding: bytes[start..<index], as: UTF8.self)
        guard name.utf8.count >= 3 else {
            throw failure(
                quoted
                    ? "expected at least 3 of A-Z a-z 0-9 + - inside <>" : "expected a zone name of at least 3 letters")
        }
        if quoted { try expect(">") }
        return name
    }

    /// A UTC offset; TZ strings count west, the result counts east.
    mutating func offset() throws(ZoneError) -> Int32 {
        -(try signedTime(maxHours: 24, what: "offset"))
    }

    mutating func change() throws(ZoneError) -> PosixTZ.Change {
        let day: PosixTZ.Day
        switch peek {
        case UInt8(ascii: "J"):
            index += 1
            day = .julianNoLeap(try number(1...365, digits: 3, what: "Julian day"))
        case UInt8(ascii: "M"):
            index += 1
            let month = try number(1...12, digits: 2, what: "month")
            try expect(".")
            let week = try number(1...5, digits: 1, what: "week")
            try expect(".")
            day = .monthWeek(month: month, week: week, weekday: try number(0...6, digits: 1, what: "weekday"))
        default:
            day = .zeroBased(try number(0...365, digits: 3, what: "day of year"))
        }
        var time: Int32 = 7200
        if peek == UInt8(ascii: "/") {
            index += 1
            time = try signedTime(maxHours: 167, what: "change time")
        }
        return PosixTZ.Change(day: day, time: time)
    }

    /// `[+|-]hh[:mm[:ss]]` in seconds.
    mutating func signedTime(maxHours: Int, what: String) throws(ZoneError) -> Int32 {
        var sign: Int32 = 1
        if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") {
            if peek == UInt8(ascii: "-") { sign = -1 }
            index += 1
        }
        var seconds = try number(0...maxHours, digits: 3, what: "\(what) hours") * 3600
        if peek == UInt8(ascii: ":") {
            index += 1
            seconds += try number(0...59, digits: 2, what: "\(what) minutes") * 60
            if peek == UInt8(ascii: ":") {
                index += 1
                seconds += try number(0...59, digits: 2, what: "\(what) seconds")
            }
        }
        return sign * Int32(seconds)
    }

    /// A decimal number of 1...`digits` digits within `range`.
    mutating func number(_ range: ClosedRange<Int>, digits: Int, what: String) throws(ZoneError) -> Int {
        let start = index
        var value = 0
        while let c = peek, isDigit(c), index - start < digits {
            value = value * 10 + Int(c - UInt8(ascii: "0"))
            index += 1
        }
        guard index > start else { throw failure("expected \(what)") }
        if let c = peek, isDigit(c) { throw failure("too many digits in \(what)") }
        guard range.contains(value) else {
            index = start
            throw failure("\(what) \(value) outside \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }
}

private func isLetter(_ c: UInt8) -> Bool {
    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(c) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(c)
}

private func isDigit(_ c: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c)
}
