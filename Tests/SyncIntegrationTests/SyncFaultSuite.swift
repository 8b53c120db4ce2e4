import Testing

/// The sync's end-to-end and fault tests beyond the happy path (EndToEndSyncTests):
/// each starts the real `phosra-gate` against the fake API on loopback and asserts on what
/// a user (dig, `status`, `hits`, the log) or the API sees. One serialized parent suite so
/// no two of these daemons compete for the CPU and their timing stays meaningful; the
/// groups live in extensions in their own files.
@Suite(.serialized) struct SyncFaultSuite {}
