/// How Go's `encoding/json` fills a struct from a request body, as far as the fake needs
/// it: `json.NewDecoder(body).Decode(&v)` reads the first value only (trailing bytes are
/// ignored), an empty body is an error, `null` leaves every field at its zero value, keys
/// match field names ignoring case (the last duplicate wins), unknown keys are ignored, and
/// a value of the wrong type fails the whole decode.
enum GoJSON {
    struct DecodeError: Error {}

    /// The members of the first value, by field (lowercased names in `fields`); `null` → [:].
    static func structFields(_ body: [UInt8], fields: [String]) throws(DecodeError) -> [String: TestJSON] {
        let value: TestJSON
        do { value = try TestJSON.parseFirst(body) } catch { throw DecodeError() }
        return try structFields(value, fields: fields)
    }

    static func structFields(_ value: TestJSON, fields: [String]) throws(DecodeError) -> [String: TestJSON] {
        switch value {
        case .null: return [:]
        case .object(let members):
            var found: [String: TestJSON] = [:]
            for member in members {
                let key = member.key.lowercased()
                if fields.contains(key) { found[key] = member.value }
            }
            return found
        default: throw DecodeError()
        }
    }

    /// A Go `string` field: a string, or null/absent for "".
    static func string(_ value: TestJSON?) throws(DecodeError) -> String? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw DecodeError()
        }
    }

    /// A Go `int` field: an integer literal (no fraction, no exponent) in Int64 range.
    static func int(_ value: TestJSON?) throws(DecodeError) -> Int? {
        switch value {
        case nil, .null?: return nil
        case .number(let text)?:
            guard let number = Int(text), !text.contains("."), !text.lowercased().contains("e") else {
                throw DecodeError()
            }
            return number
        default: throw DecodeError()
        }
    }

    /// A Go `[]string` field: an array of strings (a null element is "").
    static func strings(_ value: TestJSON?) throws(DecodeError) -> [String]? {
        switch value {
        case nil, .null?: return nil
        case .array(let items)?:
            var result: [String] = []
            for item in items { result.append(try string(item) ?? "") }
            return result
        default: throw DecodeError()
        }
    }

    /// A `time.Time` field: an RFC 3339 string (Go's strict JSON rules), or null/absent.
    static func time(_ value: TestJSON?) throws(DecodeError) -> String? {
        guard let text = try string(value) else { return nil }
        guard FakeTime.isRFC3339(text) else { throw DecodeError() }
        return text
    }

    /// `strconv.Atoi`: an optional sign and decimal digits, in Int64 range.
    static func atoi(_ text: String) -> Int? {
        var digits = Substring(text)
        if digits.first == "+" || digits.first == "-" { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text.first == "+" ? String(text.dropFirst()) : text)
    }
}
