/// Why a password cannot be hashed or a stored `proxy_password` cannot be read. One error
/// type for the module; no case carries a password, a salt or a hash, so an error can be
/// logged or printed as it is.
public enum PasswordError: Error, Equatable, Sendable, CustomStringConvertible {
    /// An empty password, or an empty stored value.
    case empty
    /// A password longer than `StoredPassword.maxPasswordBytes` (its length in bytes).
    case tooLong(Int)
    /// A control character (below U+0020, or DEL) in a password: a Basic credential cannot
    /// carry one (RFC 7617 §2), so such a password could never be presented.
    case controlCharacter
    /// A `$scrypt$` value without exactly three fields after it (how many it has).
    case fieldCount(Int)
    /// The parameter field is not `ln=N,r=N,p=N` in that order, in plain decimal.
    case badParameters(String)
    /// Parameters outside what a gateway can afford or scrypt allows (see `ScryptParameters`).
    case unsupportedParameters(logN: Int, r: Int, p: Int)
    /// The salt is not unpadded base64 of 16 to 64 bytes.
    case badSalt
    /// The hash is not unpadded base64 of 16 to 64 bytes.
    case badHash
    /// OpenSSL's random generator failed (no salt could be drawn).
    case randomFailed
    /// OpenSSL's scrypt failed (out of memory, most likely).
    case scryptFailed

    public var description: String {
        switch self {
        case .empty: "the password is empty"
        case .tooLong(let count): "the password is \(count) bytes long; at most \(StoredPassword.maxPasswordBytes)"
        case .controlCharacter: "the password contains a control character"
        case .fieldCount(let count): "a $scrypt$ hash has 3 fields after $scrypt$, not \(count)"
        case .badParameters(let text): "scrypt parameters \"\(text)\" are not ln=N,r=N,p=N"
        case .unsupportedParameters(let logN, let r, let p):
            "scrypt parameters ln=\(logN),r=\(r),p=\(p) are not supported "
                + "(ln 10 to 20 and below 16·r, r 1 to 32, p 1 to 16, at most 64 MiB)"
        case .badSalt: "the scrypt salt is not unpadded base64 of 16 to 64 bytes"
        case .badHash: "the scrypt hash is not unpadded base64 of 16 to 64 bytes"
        case .randomFailed: "OpenSSL could not draw random bytes for a salt"
        case .scryptFailed: "OpenSSL's scrypt failed"
        }
    }
}
