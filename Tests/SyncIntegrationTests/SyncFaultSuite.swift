import TestSupport
import Testing

/// The sync's end-to-end and fault tests beyond the happy path (EndToEndSyncTests):
/// each starts the real `phosra-gate` against the fake API on loopback and asserts on what
/// a user (dig, `status`, `hits`, the log) or the API sees. The groups live in extensions
/// in their own files; each group runs its tests one at a time, and the groups run beside
/// one another and the rest of the suite. Every wait is for an event the test names (a log
/// line, a request the fake API recorded), bounded in time, never a fixed sleep, so a busy
/// machine makes a test slower, not wrong.
@Suite(.blocking) struct SyncFaultSuite {}
