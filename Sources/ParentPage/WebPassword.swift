import Base64
import Glibc
import Passwords
import SystemIO

/// The parent's password for the page: one scrypt hash in `STATE/web-password` (mode 0600),
/// written by `phosra-gate web-password`. Read again whenever the file changes, so a new
/// password takes effect at once without a restart, and every session opened with the old
/// one ends (`tag`). Without the file the page serves nothing but how to set it.
public final class WebPassword: @unchecked Sendable {
    // Used on the page's loop thread only; Sendable so the daemon can hand it over.
    public static let fileName = "web-password"

    public let path: String
    private var stamp: FileStatus?
    private var stored: StoredPassword?
    /// A short digest of the stored hash: sessions carry it.
    public private(set) var tag: String?

    public init(stateDirectory: String) {
        path = stateDirectory + "/" + Self.fileName
    }

    /// The password as the file says now (nil: none set, or unreadable).
    public func current() -> (password: StoredPassword, tag: String)? {
        let now = try? Files.status(path)
        if now != stamp {
            stamp = now
            stored = nil
            tag = nil
            if now != nil, let bytes = try? Files.read(path) {
                let text = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(
                    String.init)
                if let text, let password = try? StoredPassword(text), !password.isPlain {
                    stored = password
                    tag = Base64.encode(Crypto.sha256(Array(text.utf8)).prefix(12), padded: false)
                }
            }
        }
        guard let stored, let tag else { return nil }
        return (stored, tag)
    }

    /// The hash in `stateDirectory`'s file as written, unchecked, and when the file was
    /// written (Unix seconds): what the shared store copies between gateways. Nil without
    /// a file or with an empty one.
    public static func storedHash(stateDirectory: String) -> (hash: String, writtenAt: Int64)? {
        let path = stateDirectory + "/" + fileName
        guard let status = try? Files.status(path), let bytes = try? Files.read(path, limit: 4096),
            let line = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first,
            !line.isEmpty
        else { return nil }
        return (String(line), status.modifiedNanoseconds / 1_000_000_000)
    }

    /// Writes a new hash (the `web-password` command): the file is replaced whole, 0600,
    /// owned by the state directory's owner, so a daemon that runs as its own user (the
    /// package's `phosra-gate`) can read what `sudo phosra-gate web-password` wrote.
    public static func write(hash: String, stateDirectory: String) throws(SystemError) {
        let owner = getuid() == 0 ? try Files.owner(of: stateDirectory) : nil
        try Files.writeAtomically(
            stateDirectory + "/" + fileName, Array((hash + "\n").utf8), mode: 0o600, owner: owner)
    }
}
