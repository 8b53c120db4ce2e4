import Glibc

/// Why a zone could not be loaded or a rule could not be parsed.
public enum ZoneError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The name is empty, absolute, has an empty, "." or ".." component, or holds a
    /// character that no IANA zone name uses.
    case invalidName(String)
    /// No zone file by that name exists in the directory (or the name is a directory).
    case unknownZone(String)
    /// The zone file exists but could not be opened or read; `errno` is the C error.
    case unreadable(path: String, errno: Int32)
    /// The bytes are not a valid TZif file; `reason` says what check failed and where.
    case malformed(name: String, reason: String)
    /// The POSIX TZ string is not valid; `reason` says what was expected and where.
    case badPosixTZ(String, reason: String)

    public var description: String {
        switch self {
        case .invalidName(let name):
            return "invalid zone name \"\(name)\""
        case .unknownZone(let name):
            return "unknown time zone \"\(name)\""
        case .unreadable(let path, let code):
            return "cannot read zone file \(path): \(errorText(code)) (errno \(code))"
        case .malformed(let name, let reason):
            return "malformed zone file for \"\(name)\": \(reason)"
        case .badPosixTZ(let text, let reason):
            return "invalid POSIX TZ string \"\(text)\": \(reason)"
        }
    }
}

private func errorText(_ code: Int32) -> String {
    // glibc returns static text for known codes and a thread-local buffer otherwise.
    guard let text = strerror(code) else { return "error" }
    return String(cString: text)
}
