import Base64
import HTTP1
import Testing

@testable import ProxyCore

@Suite struct BasicCredentialsTests {
    static func field(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// `Basic ` and the base64 of `credentials`.
    static func basic(_ credentials: [UInt8], scheme: String = "Basic") -> [UInt8] {
        field("\(scheme) \(Base64.encode(credentials))")
    }

    @Test func readsUserAndPassword() throws {
        let credentials = try BasicCredentials(fieldValue: Self.field("Basic YW5uYTpzZWNyZXQ="))
        #expect(credentials.user == "anna")
        #expect(credentials.password == Self.field("secret"))
        for scheme in ["basic", "BASIC", "bAsIc"] {
            #expect(try BasicCredentials(fieldValue: Self.basic(Self.field("anna:pw"), scheme: scheme)).user == "anna")
        }
        #expect(try BasicCredentials(fieldValue: Self.field("Basic   YW5uYTpzZWNyZXQ=")).user == "anna")
    }

    /// The first colon splits (RFC 7617 §2): the password may hold more; it may be empty;
    /// the user and the password may be UTF-8, the password any bytes but control ones.
    @Test func theFirstColonSplits() throws {
        let colons = try BasicCredentials(fieldValue: Self.basic(Self.field("anna:se:cr:et")))
        #expect(colons.user == "anna")
        #expect(colons.password == Self.field("se:cr:et"))
        let empty = try BasicCredentials(fieldValue: Self.basic(Self.field("anna:")))
        #expect(empty.password == [])
        let unicode = try BasicCredentials(fieldValue: Self.basic(Self.field("jürgen:pässwört")))
        #expect(unicode.user == "jürgen")
        #expect(unicode.password == Self.field("pässwört"))
        let latin1 = try BasicCredentials(fieldValue: Self.basic(Self.field("anna:") + [0x70, 0xE4, 0x73, 0x73]))
        #expect(latin1.password == [0x70, 0xE4, 0x73, 0x73], "a password's bytes are kept as sent")
    }

    @Test func malformedValuesAreNamedErrors() {
        let cases: [([UInt8], CredentialsError)] = [
            (Self.field("Basic " + String(repeating: "A", count: 2044)), .tooLong(2050)),
            (Self.field("Bearer abc"), .notBasic),
            (Self.field("Digest username=\"anna\""), .notBasic),
            (Self.field("YW5uYTpzZWNyZXQ="), .notBasic),
            (Self.field("Basicc YW5uYTpzZWNyZXQ="), .notBasic),
            (Self.field(""), .notBasic),
            (Self.field("Basic"), .malformed),
            (Self.field("Basic "), .malformed),
            (Self.field("Basic YW5u YTpzZWNyZXQ="), .malformed),
            (Self.field("Basic\tYW5uYTpzZWNyZXQ="), .malformed),
            (Self.field("Basic YW5uYTpzZWNyZXQ=\t"), .malformed),
            (Self.field("Basic YW5uYTpzZWNyZXQ"), .badBase64),
            (Self.field("Basic YW5uYTpzZWNyZXR="), .badBase64),
            (Self.field("Basic YW5uYTpz-WNyZXQ="), .badBase64),
            (Self.field("Basic user:password"), .badBase64),
            (Self.basic(Self.field("anna")), .noColon),
            (Self.basic(Self.field(":secret")), .emptyUser),
            (Self.basic(Self.field("anna:sec\tret")), .controlCharacter),
            (Self.basic(Self.field("an\u{0}na:secret")), .controlCharacter),
            (Self.basic(Self.field("anna:secret\u{7F}")), .controlCharacter),
            (Self.basic([0x61, 0xFF, 0x3A, 0x70]), .userNotUTF8),
        ]
        for (value, expected) in cases {
            #expect(throws: expected, "\(String(decoding: value, as: UTF8.self))") {
                try BasicCredentials(fieldValue: value)
            }
        }
        let longest = Self.field("Basic   ") + Array(repeating: UInt8(ascii: "A"), count: 2038) + Self.field("==")
        #expect(longest.count == BasicCredentials.maxFieldBytes)
        #expect(throws: CredentialsError.noColon) { try BasicCredentials(fieldValue: longest) }
    }

    @Test func fromAHead() throws {
        func head(_ fields: String) throws -> HeaderFields {
            try RequestHead(Self.field("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\(fields)\r\n"))
                .fields
        }
        #expect(try BasicCredentials.from(head("")) == nil)
        let found = try BasicCredentials.from(head("proxy-authorization: Basic YW5uYTpzZWNyZXQ=  \r\n"))
        #expect(found?.user == "anna")
        #expect(found?.password == Self.field("secret"))
        let twice = try head(
            "Proxy-Authorization: Basic YW5uYTpzZWNyZXQ=\r\nProxy-Authorization: Basic YW5uYTpzZWNyZXQ=\r\n")
        #expect(throws: CredentialsError.repeated) { try BasicCredentials.from(twice) }
        let other = try head("Proxy-Authorization: Negotiate abc\r\n")
        #expect(throws: CredentialsError.notBasic) { try BasicCredentials.from(other) }
    }

    /// Neither a credential's description nor an error's shows the user or the password.
    @Test func nothingShowsTheCredentials() throws {
        let credentials = try BasicCredentials(fieldValue: Self.basic(Self.field("anna-user:hunter2-pass")))
        for shown in ["\(credentials)", String(reflecting: credentials)] {
            #expect(!shown.contains("anna-user") && !shown.contains("hunter2"), "\(shown)")
        }
        let secret = Self.field("anna-user:hunter2-pass")
        let bad: [[UInt8]] = [
            Self.field("anna-user:hunter2-pass"), Self.field("Basic anna-user:hunter2-pass"),
            Self.field(Base64.encode(secret)), Self.field("Basic \(Base64.encode(secret)) \(Base64.encode(secret))"),
            Self.basic(secret + [0x09]),
        ]
        for value in bad {
            do {
                _ = try BasicCredentials(fieldValue: value)
                Issue.record("accepted \(String(decoding: value, as: UTF8.self))")
            } catch {
                let text = ProxyError.credentials(error).description
                for part in ["anna-user", "hunter2", String(Base64.encode(secret).prefix(8))] {
                    #expect(!text.contains(part), "\(text)")
                }
            }
        }
    }
}
