/// `transparent_destination` (docs/network.md#the-destination-check): where a redirected
/// connection whose name was allowed goes. Either way it reaches only an address the
/// gateway's resolver gives for that name, never one the device chose for itself.
public enum TransparentDestination: String, CaseIterable, Sendable {
    /// Resolved as a CONNECT is, and connected to the name's own address on the dialled
    /// port; the address the device dialled is not used.
    case connect
    /// Resolved, and connected to the dialled address only when it is among the name's
    /// answers; otherwise refused as `circumvention:destination`.
    case verify
}
