import Base64
import HTTP1

/// A proxy client's `Proxy-Authorization: Basic <base64 of user:password>` (RFC 7617,
/// RFC 9110 §11.7.2), read strictly: the proxy answers anything else with `407`
/// (docs/proxy.md#proxy-authentication). Pure; the password is compared elsewhere
/// (`Passwords`), in constant time.
///
/// The password stays bytes: RFC 7617 leaves the charset to the client, and decoding it
/// leniently could make two different passwords one. The user must be UTF-8, since it is
/// compared with a `proxy_user` from the configuration. Neither is ever shown: see
/// `description`.
public struct BasicCredentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    public let user: String
    public let password: [UInt8]

    /// The longest `Proxy-Authorization` value read: room for a long user name and the
    /// longest password `phosra-gate passwd` hashes (1024 bytes), base64-encoded, with
    /// nothing a client can use to make the proxy decode or keep more.
    public static let maxFieldBytes = 2048

    /// The credentials in `headers`: nil without a `Proxy-Authorization` field.
    /// - Throws: `.repeated` for more than one such field, else what `init(fieldValue:)` throws.
    public static func from(_ headers: HeaderFields) throws(CredentialsError) -> BasicCredentials? {
        var found: HeaderFields.Field?
        for field in headers.fields where headers.isNamed(field, "Proxy-Authorization") {
            guard found == nil else { throw .repeated }
            found = field
        }
        guard let found else { return nil }
        return try BasicCredentials(fieldValue: headers.bytes[found.value])
    }

    /// Reads one field value (without the surrounding white space, as `HeaderFields` keeps
    /// it): the scheme `Basic` in any case, one or more spaces, then the token68 as
    /// canonical padded base64 (RFC 4648 §4) and nothing after it. The decoded text splits
    /// at its first colon (RFC 7617 §2), so the user never contains one.
    /// - Throws: a `CredentialsError` naming the first thing wrong, cheapest check first.
    public init(fieldValue value: some Collection<UInt8>) throws(CredentialsError) {
        guard value.count <= Self.maxFieldBytes else { throw .tooLong(value.count) }
        let bytes = Array(value)
        let schemeEnd = bytes.firstIndex { $0 == 0x20 || $0 == 0x09 } ?? bytes.endIndex
        let scheme = bytes[..<schemeEnd]
        guard scheme.count == 5, zip(scheme, "basic".utf8).allSatisfy({ $0 | 0x20 == $1 }) else { throw .notBasic }
        let token = bytes[schemeEnd...].drop { $0 == 0x20 }
        guard !token.isEmpty, !token.contains(where: { $0 == 0x20 || $0 == 0x09 }) else { throw .malformed }
        guard let decoded = Base64.decode(token) else { throw .badBase64 }
        guard let colon = decoded.firstIndex(of: UInt8(ascii: ":")) else { throw .noColon }
        guard colon > 0 else { throw .emptyUser }
        // RFC 7617 §2: neither part may hold a control character.
        guard !decoded.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { throw .controlCharacter }
        guard let user = String(validating: decoded[..<colon], as: UTF8.self) else { throw .userNotUTF8 }
        self.user = user
        password = Array(decoded[(colon + 1)...])
    }

    public var description: String { "BasicCredentials(not shown)" }
    public var debugDescription: String { description }
}

/// Why a `Proxy-Authorization` field is not usable Basic credentials. Every case is
/// answered `407` (`ProxyError.credentials`); none carries a user name or a password.
public enum CredentialsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The value is longer than `BasicCredentials.maxFieldBytes` (its length).
    case tooLong(Int)
    /// More than one `Proxy-Authorization` field.
    case repeated
    /// A scheme other than Basic (`Digest`, `NTLM`, `Negotiate`, …). Not named: a client
    /// that sends bare base64 credentials would have them shown as the scheme.
    case notBasic
    /// `Basic` without a token after it (after one or more spaces), or with more than one.
    case malformed
    /// The token is not canonical padded base64.
    case badBase64
    /// The decoded text has no colon between user and password.
    case noColon
    /// The user before the colon is empty.
    case emptyUser
    /// A control character in the user or the password.
    case controlCharacter
    /// The user is not UTF-8.
    case userNotUTF8

    public var description: String {
        switch self {
        case .tooLong(let count):
            "Proxy-Authorization is \(count) bytes long; at most \(BasicCredentials.maxFieldBytes)"
        case .repeated: "more than one Proxy-Authorization field"
        case .notBasic: "Proxy-Authorization is not Basic"
        case .malformed: "Proxy-Authorization: Basic needs one token"
        case .badBase64: "Proxy-Authorization: Basic credentials are not base64"
        case .noColon: "Proxy-Authorization: Basic credentials have no colon between user and password"
        case .emptyUser: "Proxy-Authorization: Basic credentials have an empty user"
        case .controlCharacter: "Proxy-Authorization: Basic credentials contain a control character"
        case .userNotUTF8: "Proxy-Authorization: Basic user is not UTF-8"
        }
    }
}
