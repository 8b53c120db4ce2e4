import COpenSSL
import COpenSSLShim
import Glibc

/// The fields and extensions of a self-signed certificate, through OpenSSL's X509 API.
/// Arguments arrive validated (`SelfSignedCertificate.make`).
extension SelfSignedCertificate {
    /// Everything but the signature: version, serial, validity, names, key, extensions.
    static func fill(
        _ certificate: OpaquePointer, key: OpaquePointer, commonName: String, dnsNames: [String],
        ipAddresses: [String], validity: (notBefore: Int, notAfter: Int)
    ) throws(TLSError) {
        guard X509_set_version(certificate, Int(X509_VERSION_3)) == 1 else { throw failure("set the version") }
        try setRandomSerial(certificate)
        guard ASN1_TIME_set(X509_getm_notBefore(certificate), time_t(validity.notBefore)) != nil,
            ASN1_TIME_set(X509_getm_notAfter(certificate), time_t(validity.notAfter)) != nil
        else { throw failure("set the validity") }
        try setName(certificate, commonName: commonName)
        guard X509_set_pubkey(certificate, key) == 1 else { throw failure("set the public key") }
        try addSubjectAltName(certificate, dnsNames: dnsNames, ipAddresses: ipAddresses)
        // Fixed values, so OpenSSL's configuration syntax is safe here; the names above are
        // built as structures instead, where a comma in a name could not add another one.
        var v3 = X509V3_CTX()
        X509V3_set_ctx(&v3, certificate, certificate, nil, nil, 0)
        let extensions = [
            (NID_basic_constraints, "critical,CA:FALSE"),
            (NID_key_usage, "critical,digitalSignature"),
            (NID_ext_key_usage, "serverAuth"),
            // RFC 5280 §4.2.1.2: how a client's store tells this key from another's.
            (NID_subject_key_identifier, "hash"),
        ]
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_conf_nid(nil, &v3, nid, value) else { throw failure("make \(value)") }
            defer { X509_EXTENSION_free(ext) }
            guard X509_add_ext(certificate, ext, -1) == 1 else { throw failure("add \(value)") }
        }
    }

    /// 16 random bytes, the top bit clear (positive, §4.1.2.2) and the next one set, so the
    /// number is never zero and always encodes in exactly 16 bytes.
    private static func setRandomSerial(_ certificate: OpaquePointer) throws(TLSError) {
        var bytes = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&bytes, Int32(bytes.count)) == 1 else { throw failure("draw a serial number") }
        bytes[0] = bytes[0] & 0x3F | 0x40
        guard let number = BN_bin2bn(bytes, Int32(bytes.count), nil) else { throw failure("make a serial number") }
        defer { BN_free(number) }
        guard BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil else {
            throw failure("set the serial number")
        }
    }

    /// Subject and issuer alike: the common name only.
    private static func setName(_ certificate: OpaquePointer, commonName: String) throws(TLSError) {
        guard let name = X509_NAME_new() else { throw failure("allocate a name") }
        defer { X509_NAME_free(name) }
        let text = Array(commonName.utf8)
        guard X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, text, Int32(text.count), -1, 0) == 1,
            X509_set_subject_name(certificate, name) == 1, X509_set_issuer_name(certificate, name) == 1
        else { throw failure("set the common name") }
    }

    private static func addSubjectAltName(
        _ certificate: OpaquePointer, dnsNames: [String], ipAddresses: [String]
    ) throws(TLSError) {
        guard let names = GENERAL_NAMES_new() else { throw failure("allocate the alternative names") }
        defer { GENERAL_NAMES_free(names) }
        for name in dnsNames {
            guard let text = ASN1_IA5STRING_new() else { throw failure("allocate a DNS name") }
            guard ASN1_STRING_set(text, name, Int32(name.utf8.count)) == 1 else {
                ASN1_IA5STRING_free(text)
                throw failure("set DNS name \(name)")
            }
            try append(GEN_DNS, text, to: names)
        }
        for address in ipAddresses {
            // The network-order bytes: 4 for IPv4, 16 for IPv6 (§4.2.1.6).
            guard let octets = a2i_IPADDRESS(address) else { throw failure("encode IP address \(address)") }
            try append(GEN_IPADD, octets, to: names)
        }
        guard X509_add1_ext_i2d(certificate, NID_subject_alt_name, UnsafeMutableRawPointer(names), 0, 0) == 1 else {
            throw failure("add the alternative names")
        }
    }

    /// Wraps `value` in a GeneralName of `type` and appends it; `names` owns both after,
    /// and on failure nothing leaks.
    private static func append(
        _ type: Int32, _ value: UnsafeMutablePointer<ASN1_STRING>, to names: OpaquePointer
    ) throws(TLSError) {
        guard let general = GENERAL_NAME_new() else {
            ASN1_STRING_free(value)
            throw failure("allocate an alternative name")
        }
        GENERAL_NAME_set0_value(general, type, UnsafeMutableRawPointer(value))
        guard OPENSSL_sk_push(names, UnsafeRawPointer(general)) > 0 else {
            GENERAL_NAME_free(general)
            throw failure("append an alternative name")
        }
    }
}
