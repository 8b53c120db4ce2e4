// The pure fixtures (seeded generator, hand-made ClientHellos, the malformed-head table)
// live in TestFixtures so that tests of pure modules can use them without Foundation or
// sockets; every test that imports TestSupport keeps seeing them.
@_exported import TestFixtures
