/// The allocation-free path for the common list line: a plain ASCII host name made of
/// letters, digits, `-`, `_` and dots, optionally with a leading `*.`/`.` and a trailing
/// dot. Anything else returns nil and takes the general path (`ListEntry.parse`), which
/// gives the same verdict for these inputs.
enum FastName {
    /// Writes the lowercase name into `scratch` and returns its length, or the reason to
    /// skip it; nil when the token needs the general path.
    static func check(_ token: UnsafeRawBufferPointer, into scratch: inout [UInt8]) -> Result<Int, SkipReason>? {
        var start = 0
        var end = token.count
        if end >= 2, token[0] == UInt8(ascii: "*"), token[1] == UInt8(ascii: ".") {
            start = 2
        } else if end >= 1, token[0] == UInt8(ascii: ".") {
            start = 1
        }
        var onlyDigitsAndDots = true
        for index in start..<end {
            let byte = token[index]
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."):
                continue
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "-"), UInt8(ascii: "_"):
                onlyDigitsAndDots = false
            default:
                return nil
            }
        }
        // A dotted quad is an IP entry; a leading "*." or "." the general path handles.
        if onlyDigitsAndDots || start > 0 && end - start == 0 { return nil }
        if end > start, token[end - 1] == UInt8(ascii: ".") { end -= 1 }
        guard end > start else { return .failure(.invalid(.empty)) }
        guard end - start <= QueryName.maxOctets else { return .failure(.invalid(.tooLong(octets: end - start))) }
        var labels = 1
        var labelLength = 0
        for index in start..<end {
            let byte = token[index]
            if byte == UInt8(ascii: ".") {
                guard labelLength > 0 else { return .failure(.invalid(.emptyLabel)) }
                labels += 1
                labelLength = 0
            } else {
                labelLength += 1
                guard labelLength <= QueryName.maxLabelOctets else {
                    return nil  // let the general path name the exact label length
                }
            }
            scratch[index - start] = byte.asciiLowercased
        }
        guard labelLength > 0 else { return .failure(.invalid(.emptyLabel)) }
        guard labels >= 2 else { return .failure(.singleLabel) }
        return .success(end - start)
    }
}
