import Base64

/// A profile's `proxy_password` as the configuration holds it, read once: an scrypt hash
/// made by `phosra-gate passwd` (`$scrypt$ln=14,r=8,p=1$<salt>$<hash>`, the PHC string
/// format with unpadded base64), or any other text, which is the password itself
/// (accepted, but the caller warns: see `isPlain`). docs/proxy.md#proxy-authentication.
///
/// Neither form ever prints: `description` says only which form it is, so a stored
/// password interpolated into a log line or an error by mistake shows nothing.
public struct StoredPassword: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The longest password `hash` takes, in bytes; `passwd` refuses longer ones.
    public static let maxPasswordBytes = 1024

    enum Form: Sendable {
        case scrypt(ScryptParameters, salt: [UInt8], key: [UInt8])
        /// The SHA-256 of the plain password: what `matches` compares, in constant time
        /// whatever the lengths.
        case plain(digest: [UInt8])
    }

    let form: Form
    /// What identifies this stored value in `PasswordVerifier`'s cache (never shown).
    let identity: [UInt8]

    /// Reads a stored value. Text that begins with `$scrypt$` must be a well-formed hash;
    /// anything else is a plain password.
    /// - Throws: `.empty`; for a hash, `.fieldCount`, `.badParameters`,
    ///   `.unsupportedParameters`, `.badSalt` or `.badHash`.
    public init(_ text: String) throws(PasswordError) {
        guard !text.isEmpty else { throw .empty }
        identity = Array(text.utf8)
        guard text.hasPrefix(Self.prefix) else {
            form = .plain(digest: Crypto.sha256(identity))
            return
        }
        let fields = text.dropFirst(Self.prefix.count).split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 3 else { throw .fieldCount(fields.count) }
        let parameters = try ScryptParameters.parse(fields[0])
        guard let salt = Base64.decode(Array(fields[1].utf8), padded: false), (16...64).contains(salt.count) else {
            throw .badSalt
        }
        guard let key = Base64.decode(Array(fields[2].utf8), padded: false), (16...64).contains(key.count) else {
            throw .badHash
        }
        form = .scrypt(parameters, salt: salt, key: key)
    }

    static let prefix = "$scrypt$"

    /// True for a plain password: it works, but anyone who reads the configuration file
    /// reads the password, so the caller warns (naming the profile, never the value).
    public var isPlain: Bool {
        if case .plain = form { return true }
        return false
    }

    /// Whether `password` is this one. An scrypt hash costs one scrypt run (about 0.1 s on a
    /// Raspberry Pi); callers that verify often go through `PasswordVerifier`, which
    /// remembers successes. The comparison takes the same time wherever the bytes differ.
    public func matches(_ password: [UInt8]) -> Bool {
        switch form {
        case .plain(let digest):
            return Crypto.constantTimeEqual(Crypto.sha256(password), digest)
        case .scrypt(let parameters, let salt, let key):
            guard password.count <= Self.maxPasswordBytes,
                let derived = try? Crypto.scrypt(password, salt: salt, parameters: parameters, length: key.count)
            else { return false }
            return Crypto.constantTimeEqual(derived, key)
        }
    }

    /// The stored form of `password` for `proxy_password`: scrypt with a fresh random
    /// 16-byte salt and a 32-byte key, as `$scrypt$ln=14,r=8,p=1$<salt>$<hash>`.
    /// - Throws: `.empty`, `.tooLong`, `.controlCharacter` for a password no proxy client
    ///   could send; `.randomFailed` or `.scryptFailed` when OpenSSL fails.
    public static func hash(
        _ password: [UInt8], parameters: ScryptParameters = .standard
    ) throws(PasswordError)
        -> String
    {
        try check(password)
        let salt = try Crypto.randomBytes(16)
        let key = try Crypto.scrypt(password, salt: salt, parameters: parameters, length: 32)
        return prefix + parameters.field + "$" + Base64.encode(salt, padded: false) + "$"
            + Base64.encode(key, padded: false)
    }

    /// What a password must be to be hashed: not empty, at most `maxPasswordBytes`, and no
    /// control characters (RFC 7617 §2 keeps them out of Basic credentials).
    public static func check(_ password: [UInt8]) throws(PasswordError) {
        guard !password.isEmpty else { throw .empty }
        guard password.count <= maxPasswordBytes else { throw .tooLong(password.count) }
        guard !password.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { throw .controlCharacter }
    }

    public var description: String { isPlain ? "StoredPassword(plain)" : "StoredPassword(scrypt)" }
    public var debugDescription: String { description }
}
