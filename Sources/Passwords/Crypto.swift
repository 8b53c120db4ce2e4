import COpenSSL

/// The few primitives of libcrypto this module uses, each one call: random bytes, scrypt,
/// SHA-256, HMAC-SHA-256 and a comparison whose time does not depend on the bytes (also
/// the parent's page's session tokens).
public enum Crypto {
    /// `count` bytes from OpenSSL's CSPRNG.
    public static func randomBytes(_ count: Int) throws(PasswordError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let status = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        guard status == 1 else { throw .randomFailed }
        return bytes
    }

    /// scrypt (RFC 7914) through `EVP_PBE_scrypt`, `length` bytes of key. `maxmem` is the
    /// parameters' own need, which `ScryptParameters` has bounded.
    static func scrypt(
        _ password: [UInt8], salt: [UInt8], parameters: ScryptParameters, length: Int
    ) throws(PasswordError) -> [UInt8] {
        var key = [UInt8](repeating: 0, count: length)
        // A zero-length password still needs a valid pointer.
        let input = password.isEmpty ? [0] : password
        let status = input.withUnsafeBufferPointer { pass in
            salt.withUnsafeBufferPointer { salt in
                key.withUnsafeMutableBufferPointer { key in
                    pass.withMemoryRebound(to: CChar.self) { pass in
                        EVP_PBE_scrypt(
                            pass.baseAddress, password.count, salt.baseAddress, salt.count,
                            UInt64(1) << UInt64(parameters.logN), UInt64(parameters.r), UInt64(parameters.p),
                            UInt64(parameters.memoryBytes), key.baseAddress, key.count)
                    }
                }
            }
        }
        guard status == 1 else {
            ERR_clear_error()
            throw .scryptFailed
        }
        return key
    }

    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let input = bytes.isEmpty ? [0] : bytes
        _ = input.withUnsafeBufferPointer { data in
            digest.withUnsafeMutableBufferPointer { out in
                EVP_Digest(data.baseAddress, bytes.count, out.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        return digest
    }

    static func hmacSHA256(key: [UInt8], _ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let input = bytes.isEmpty ? [0] : bytes
        _ = key.withUnsafeBufferPointer { key in
            input.withUnsafeBufferPointer { data in
                digest.withUnsafeMutableBufferPointer { out in
                    HMAC(
                        EVP_sha256(), key.baseAddress, Int32(key.count), data.baseAddress, bytes.count, out.baseAddress,
                        &length)
                }
            }
        }
        return digest
    }

    /// `CRYPTO_memcmp`: the time taken depends on the length only, never on where the
    /// bytes first differ. Unequal lengths are unequal at once: every caller compares
    /// fixed-length digests or keys whose length is not secret.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { a in
            b.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0 }
        }
    }
}
