import DomainMatch

extension MACAddress {
    /// The U/L bit (0x02 of the first octet, IEEE 802 §8.2) is set: the address was not
    /// assigned by a vendor under an OUI but chosen locally, most often a phone's
    /// randomised private address (one per network). It names no vendor, so
    /// `VendorLookup` gives it none; the page says "private address" instead.
    public var isLocallyAdministered: Bool { value >> 40 & 0x02 != 0 }
}
