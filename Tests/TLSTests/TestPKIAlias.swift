import TestSupport

/// The shared test PKI (a CA, a server certificate for dot.test and 127.0.0.1, another CA).
typealias TestPKI = TestCertificates
