import Glibc
import SystemIO
import Zoneinfo

/// The composition root's name and the daemon's constants; the commands are `Commands`'.
package enum Gateway {
    package static let version = "0.1.0"

    /// For tests of the real binary only; never set on a real gateway. See `CLI.makeClock`.
    package static let testClockVariable = "PHOSRA_GATE_TEST_CLOCK"
    /// Test-only: when set, SIGUSR2 wedges the first loop thread for good, so a test can
    /// see the systemd watchdog stop being pinged (docs/configuration.md#systemd).
    package static let testWedgeVariable = "PHOSRA_GATE_TEST_WEDGE"
}
