import Base64
import Testing

@testable import Passwords

@Suite struct StoredPasswordTests {
    /// Cheap parameters, so that the tests that hash many times stay fast.
    static let fast = try! ScryptParameters(logN: 10, r: 8, p: 1)

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func aHashHasTheDocumentedFormAndVerifies() throws {
        let text = try StoredPassword.hash(Self.bytes("correct horse"))
        #expect(text.hasPrefix("$scrypt$ln=14,r=8,p=1$"))
        let fields = text.split(separator: "$", omittingEmptySubsequences: false)
        #expect(fields.count == 5)
        #expect(Base64.decode(Array(fields[3].utf8), padded: false)?.count == 16, "16-byte salt")
        #expect(Base64.decode(Array(fields[4].utf8), padded: false)?.count == 32, "32-byte key")
        let stored = try StoredPassword(text)
        #expect(!stored.isPlain)
        #expect(stored.matches(Self.bytes("correct horse")))
        #expect(!stored.matches(Self.bytes("correct horsE")))
        #expect(!stored.matches(Self.bytes("correct hors")))
        #expect(!stored.matches(Self.bytes("correct horse ")))
        #expect(!stored.matches([]))
    }

    @Test func everyHashHasItsOwnSalt() throws {
        let one = try StoredPassword.hash(Self.bytes("same"), parameters: Self.fast)
        let two = try StoredPassword.hash(Self.bytes("same"), parameters: Self.fast)
        #expect(one != two)
        #expect(one.split(separator: "$")[2] != two.split(separator: "$")[2])
        #expect(try StoredPassword(one).matches(Self.bytes("same")))
        #expect(try StoredPassword(two).matches(Self.bytes("same")))
    }

    /// RFC 7914 §12's vectors, through the same call `hash` and `matches` make.
    @Test func scryptGivesTheRFCVectors() throws {
        let first = try Crypto.scrypt(
            Self.bytes("password"), salt: Self.bytes("NaCl"), parameters: ScryptParameters(logN: 10, r: 8, p: 16),
            length: 64)
        #expect(
            hex(first)
                == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
                + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
        let second = try Crypto.scrypt(
            Self.bytes("pleaseletmein"), salt: Self.bytes("SodiumChloride"), parameters: .standard, length: 64)
        #expect(
            hex(second)
                == "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2"
                + "d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887")
    }

    /// A hash written by hand from the RFC's second vector (with a 16-byte salt of its own
    /// computed here) reads back, and the key is compared, not just recomputed.
    @Test func aHandWrittenHashReadsBack() throws {
        let salt = Array(repeating: UInt8(7), count: 16)
        let key = try Crypto.scrypt(Self.bytes("pw"), salt: salt, parameters: Self.fast, length: 32)
        let text = "$scrypt$ln=10,r=8,p=1$\(Base64.encode(salt, padded: false))$\(Base64.encode(key, padded: false))"
        #expect(try StoredPassword(text).matches(Self.bytes("pw")))
        var other = key
        other[31] ^= 1
        let wrong = "$scrypt$ln=10,r=8,p=1$\(Base64.encode(salt, padded: false))$\(Base64.encode(other, padded: false))"
        #expect(try !StoredPassword(wrong).matches(Self.bytes("pw")))
    }

    @Test func malformedHashesAreNamedErrors() {
        let salt = Base64.encode([UInt8](repeating: 1, count: 16), padded: false)
        let key = Base64.encode([UInt8](repeating: 2, count: 32), padded: false)
        let cases: [(String, PasswordError)] = [
            ("", .empty),
            ("$scrypt$", .fieldCount(1)),
            ("$scrypt$ln=14,r=8,p=1$\(salt)", .fieldCount(2)),
            ("$scrypt$ln=14,r=8,p=1$\(salt)$\(key)$", .fieldCount(4)),
            ("$scrypt$ln=14,p=1,r=8$\(salt)$\(key)", .badParameters("ln=14,p=1,r=8")),
            ("$scrypt$ln=014,r=8,p=1$\(salt)$\(key)", .badParameters("ln=014,r=8,p=1")),
            ("$scrypt$ln=+14,r=8,p=1$\(salt)$\(key)", .badParameters("ln=+14,r=8,p=1")),
            ("$scrypt$ln=14,r=8$\(salt)$\(key)", .badParameters("ln=14,r=8")),
            ("$scrypt$ln=14,r=8,p=1,x=1$\(salt)$\(key)", .badParameters("ln=14,r=8,p=1,x=1")),
            ("$scrypt$ln=,r=8,p=1$\(salt)$\(key)", .badParameters("ln=,r=8,p=1")),
            ("$scrypt$LN=14,r=8,p=1$\(salt)$\(key)", .badParameters("LN=14,r=8,p=1")),
            ("$scrypt$ln=14, r=8,p=1$\(salt)$\(key)", .badParameters("ln=14, r=8,p=1")),
            ("$scrypt$ln=9,r=8,p=1$\(salt)$\(key)", .unsupportedParameters(logN: 9, r: 8, p: 1)),
            ("$scrypt$ln=21,r=8,p=1$\(salt)$\(key)", .unsupportedParameters(logN: 21, r: 8, p: 1)),
            ("$scrypt$ln=17,r=8,p=1$\(salt)$\(key)", .unsupportedParameters(logN: 17, r: 8, p: 1)),
            ("$scrypt$ln=16,r=1,p=1$\(salt)$\(key)", .unsupportedParameters(logN: 16, r: 1, p: 1)),
            ("$scrypt$ln=14,r=0,p=1$\(salt)$\(key)", .unsupportedParameters(logN: 14, r: 0, p: 1)),
            ("$scrypt$ln=14,r=8,p=17$\(salt)$\(key)", .unsupportedParameters(logN: 14, r: 8, p: 17)),
            ("$scrypt$ln=14,r=8,p=1$\(salt)==$\(key)", .badSalt),
            ("$scrypt$ln=14,r=8,p=1$c2FsdA$\(key)", .badSalt),
            ("$scrypt$ln=14,r=8,p=1$\(salt.dropLast())!$\(key)", .badSalt),
            ("$scrypt$ln=14,r=8,p=1$\(salt)$", .badHash),
            ("$scrypt$ln=14,r=8,p=1$\(salt)$\(key)=", .badHash),
            ("$scrypt$ln=14,r=8,p=1$\(salt)$\(key.dropLast(30))", .badHash),
        ]
        for (text, expected) in cases {
            #expect(throws: expected, "\(text)") { try StoredPassword(text) }
        }
        #expect(throws: Never.self) { try StoredPassword("$scrypt$ln=14,r=8,p=1$\(salt)$\(key)") }
    }

    @Test func anyOtherValueIsAPlainPassword() throws {
        for text in ["hunter2", "$scrypt", "$SCRYPT$ln=14,r=8,p=1$a$b", "$2y$10$abcdefghijklmnopqrstuv", "ln=14"] {
            let stored = try StoredPassword(text)
            #expect(stored.isPlain, "\(text)")
            #expect(stored.matches(Self.bytes(text)))
            #expect(!stored.matches(Self.bytes(text + "x")))
            #expect(!stored.matches(Self.bytes(String(text.dropLast()))))
        }
    }

    @Test func hashRefusesPasswordsNoClientCouldSend() throws {
        #expect(throws: PasswordError.empty) { try StoredPassword.hash([], parameters: Self.fast) }
        #expect(throws: PasswordError.controlCharacter) {
            try StoredPassword.hash(Self.bytes("a\tb"), parameters: Self.fast)
        }
        #expect(throws: PasswordError.controlCharacter) {
            try StoredPassword.hash(Self.bytes("a\u{7F}"), parameters: Self.fast)
        }
        let long = [UInt8](repeating: 0x61, count: StoredPassword.maxPasswordBytes + 1)
        #expect(throws: PasswordError.tooLong(1025)) { try StoredPassword.hash(long, parameters: Self.fast) }
        let longest = Array(long.dropLast())
        #expect(try StoredPassword(StoredPassword.hash(longest, parameters: Self.fast)).matches(longest))
        let unicode = Self.bytes("pässwört ✓")
        #expect(try StoredPassword(StoredPassword.hash(unicode, parameters: Self.fast)).matches(unicode))
    }

    /// Nothing secret is ever printed: not the plain password, not the salt or the hash.
    @Test func descriptionsShowNoSecret() throws {
        let plain = try StoredPassword("hunter2")
        let text = try StoredPassword.hash(Self.bytes("hunter2"), parameters: Self.fast)
        let hashed = try StoredPassword(text)
        let secrets = ["hunter2"] + text.split(separator: "$").suffix(2).map(String.init)
        for shown in [
            "\(plain)", "\(hashed)", String(reflecting: plain), String(reflecting: hashed),
        ] {
            for secret in secrets { #expect(!shown.contains(secret), "\(shown)") }
        }
        #expect("\(plain)" == "StoredPassword(plain)")
        #expect("\(hashed)" == "StoredPassword(scrypt)")
        for error in [PasswordError.badSalt, .badHash, .fieldCount(2), .empty, .controlCharacter] {
            for secret in secrets { #expect(!error.description.contains(secret)) }
        }
    }
}

func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}
