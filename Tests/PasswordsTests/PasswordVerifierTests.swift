import Testing

@testable import Passwords

@Suite struct PasswordVerifierTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A success runs scrypt once; the same credentials again come from the cache.
    @Test func aSuccessIsRememberedAFailureIsNot() throws {
        let verifier = PasswordVerifier()
        let stored = try StoredPassword(StoredPassword.hash(Self.bytes("secret"), parameters: StoredPasswordTests.fast))
        #expect(verifier.verify(user: "anna", password: Self.bytes("secret"), against: stored))
        #expect(verifier.verify(user: "anna", password: Self.bytes("secret"), against: stored))
        #expect(verifier.fullVerifications.load(ordering: .relaxed) == 1, "the second came from the cache")
        #expect(verifier.cachedCount == 1)
        for _ in 0..<2 { #expect(!verifier.verify(user: "anna", password: Self.bytes("Secret"), against: stored)) }
        #expect(verifier.fullVerifications.load(ordering: .relaxed) == 3, "failures always run in full")
        #expect(verifier.cachedCount == 1)
        #expect(!verifier.verify(user: "anna", password: [], against: stored))
    }

    /// The cache key is the user, the password and the stored value together: a changed
    /// `proxy_password` does not let the old password in.
    @Test func theStoredValueAndTheUserArePartOfTheKey() throws {
        let verifier = PasswordVerifier()
        let old = try StoredPassword("old-password")
        #expect(verifier.verify(user: "anna", password: Self.bytes("old-password"), against: old))
        let new = try StoredPassword(
            StoredPassword.hash(Self.bytes("new-password"), parameters: StoredPasswordTests.fast))
        #expect(!verifier.verify(user: "anna", password: Self.bytes("old-password"), against: new))
        #expect(verifier.verify(user: "anna", password: Self.bytes("new-password"), against: new))
        #expect(verifier.verify(user: "ben", password: Self.bytes("new-password"), against: new))
        #expect(verifier.fullVerifications.load(ordering: .relaxed) == 4)
        #expect(verifier.cachedCount == 3)
    }

    @Test func theCacheIsBoundedOldestFirst() throws {
        let verifier = PasswordVerifier(capacity: 2)
        let stored = try (0..<3).map { try StoredPassword("password-\($0)") }
        for (index, password) in stored.enumerated() {
            #expect(verifier.verify(user: "u", password: Self.bytes("password-\(index)"), against: password))
        }
        #expect(verifier.cachedCount == 2)
        let before = verifier.fullVerifications.load(ordering: .relaxed)
        #expect(verifier.verify(user: "u", password: Self.bytes("password-2"), against: stored[2]))
        #expect(verifier.fullVerifications.load(ordering: .relaxed) == before, "the newest is still cached")
        #expect(verifier.verify(user: "u", password: Self.bytes("password-0"), against: stored[0]))
        #expect(verifier.fullVerifications.load(ordering: .relaxed) == before + 1, "the oldest was forgotten")
        #expect(verifier.cachedCount == 2)
    }
}
