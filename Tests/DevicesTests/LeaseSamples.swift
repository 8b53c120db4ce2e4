import DomainMatch

/// Shorthands for the lease tests; the samples themselves sit in each test, written for it.
func mac(_ text: String) -> MACAddress { MACAddress(text)! }
func ip(_ text: String) -> IPAddress { IPAddress(text)! }
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
