import Glibc

/// Finding zones on disk: by IANA name, or the system's own zone.
extension ZoneRules {
    /// Where zoneinfo files live unless told otherwise: $TZDIR when set and not empty,
    /// else /usr/share/zoneinfo.
    public static var defaultDirectory: String {
        if let value = getenv("TZDIR"), value.pointee != 0 { return String(cString: value) }
        return "/usr/share/zoneinfo"
    }

    /// Loads `name` (e.g. "Europe/Berlin", "UTC") from `directory` (default:
    /// `defaultDirectory`).
    /// - Throws: `.invalidName` for an empty or absolute name, an empty, "." or ".."
    ///   component, or a character outside `A-Z a-z 0-9 . _ + -` and "/";
    ///   `.unknownZone` when there is no such file; `.unreadable` when it cannot be read;
    ///   `.malformed` when it is not a valid TZif file.
    public static func load(named name: String, directory: String? = nil) throws(ZoneError) -> ZoneRules {
        guard isValidName(name) else { throw .invalidName(name) }
        let base = directory ?? defaultDirectory
        let path = base.hasSuffix("/") ? base + name : base + "/" + name
        do {
            return try ZoneRules(tzif: readZoneFile(path, name: name), name: name)
        } catch .unreadable(_, let code) where code == ENOENT || code == ENOTDIR || code == EISDIR {
            throw .unknownZone(name)
        }
    }

    /// The system's zone; never fails (falls back to UTC). See `system(tz:localtime:directory:)`.
    public static func system() -> ZoneRules {
        system(tz: getenv("TZ").map { String(cString: $0) })
    }

    /// The zone `system()` picks when $TZ is `tz` (nil: unset) and the local zone file is
    /// `localtime`. As glibc does: an empty TZ means UTC; ":Name" or "Name" is loaded
    /// from `directory`, and ":/path" or "/path" read directly; a TZ that names no file
    /// is tried as a POSIX TZ string (unless it began with ':'). With no TZ the file
    /// `localtime` is read, named by its symlink target below `.../zoneinfo/` when it is
    /// one (else "localtime"). Anything unusable gives UTC.
    public static func system(tz: String?, localtime: String = "/etc/localtime", directory: String? = nil) -> ZoneRules
    {
        guard let tz else { return (try? loadFile(localtime, fallbackName: "localtime")) ?? .utc }
        var spec = Substring(tz)
        let hasColon = spec.first == ":"
        if hasColon { spec = spec.dropFirst() }
        if spec.isEmpty { return .utc }
        if spec.first == "/" {
            if let zone = try? loadFile(String(spec), fallbackName: String(spec)) { return zone }
        } else if let zone = try? load(named: String(spec), directory: directory) {
            return zone
        }
        if !hasColon, let zone = try? ZoneRules(posixTZ: tz) { return zone }
        return .utc
    }

    static func isValidName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 255, name.first != "/" else { return false }
        let allowed = name.utf8.allSatisfy { c in
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(c) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(c)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) || "._+-/".utf8.contains(c)
        }
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        return allowed && !components.contains { $0.isEmpty || $0 == "." || $0 == ".." }
    }

    /// Reads a zone file by path, naming it after the part of its symlink target (or of
    /// the path itself) below a "zoneinfo" directory, without a "posix/" prefix.
    static func loadFile(_ path: String, fallbackName: String) throws(ZoneError) -> ZoneRules {
        var name = zoneName(below: path) ?? fallbackName
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count - 1)
        if count > 0,
            let target = zoneName(
                below: String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self))
        {
            name = target
        }
        return try ZoneRules(tzif: readZoneFile(path, name: name), name: name)
    }

    static func zoneName(below path: String) -> String? {
        var parts = path.split(separator: "/")
        guard let index = parts.lastIndex(of: "zoneinfo"), index + 1 < parts.count else { return nil }
        parts.removeSubrange(...index)
        if parts.count > 1 && parts[0] == "posix" { parts.removeFirst() }
        return parts.joined(separator: "/")
    }

    /// The whole of a regular file of at most 1 MiB (real zone files are a few KiB).
    static func readZoneFile(_ path: String, name: String) throws(ZoneError) -> [UInt8] {
        // O_NONBLOCK so that a FIFO in the way cannot hang us before the type check.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw .unreadable(path: path, errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(path: path, errno: errno) }
        switch info.st_mode & 0o170000 {
        case 0o100000: break  // regular file
        case 0o040000: throw .unreadable(path: path, errno: EISDIR)
        default: throw .malformed(name: name, reason: "\(path) is not a regular file")
        }
        let limit = 1 << 20
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw .unreadable(path: path, errno: errno) }
            if got == 0 { return bytes }
            bytes += chunk[0..<got]
            guard bytes.count <= limit else { throw .malformed(name: name, reason: "\(path) is larger than 1 MiB") }
        }
    }
}
