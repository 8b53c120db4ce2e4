import DomainMatch
import Policy

/// Who the firewall catches, in the order a profile is chosen (docs/configuration.md#profiles):
/// a MAC address first, then the longest address or CIDR, then the default profile. A
/// client whose profile is `none` is exempt; every other profile filters. Proxy users do
/// not appear: a login is not visible in a packet.
struct ClientSets: Equatable {
    var exemptMACs: [MACAddress]
    var filteredMACs: [MACAddress]
    /// Whoever no entry covers is filtered (`default_profile` names a profile).
    var defaultFiltered: Bool
    /// With `defaultFiltered`, the addresses whose longest entry is exempt; otherwise the
    /// addresses whose longest entry filters. Disjoint CIDR blocks, in address order.
    var addresses4: [AddressRange]
    var addresses6: [AddressRange]

    init(_ roster: ProfileRoster) {
        var exemptMACs: Set<MACAddress> = []
        var filteredMACs: Set<MACAddress> = []
        var ranges4: [(range: AddressRange, label: Bool)] = []
        var ranges6: [(range: AddressRange, label: Bool)] = []
        for member in roster.members {
            let filters = member.name != Profile.noneName
            for entry in member.clients {
                switch entry {
                case .mac(let mac):
                    if filters { filteredMACs.insert(mac) } else { exemptMACs.insert(mac) }
                case .range(let range):
                    if case .v4 = range.address {
                        ranges4.append((range, filters))
                    } else {
                        ranges6.append((range, filters))
                    }
                }
            }
        }
        defaultFiltered = roster.defaultProfile != Profile.noneName
        // A MAC in both is a configuration error caught earlier; were it not, the
        // filtering entry wins here, the safer reading.
        self.filteredMACs = filteredMACs.sorted { $0.value < $1.value }
        self.exemptMACs = exemptMACs.subtracting(filteredMACs).sorted { $0.value < $1.value }
        let wanted = !defaultFiltered
        addresses4 = PrefixPartition.blocks(ranges4, bitWidth: 32).filter { $0.label == wanted }.map {
            PrefixPartition.range($0, bitWidth: 32)
        }
        addresses6 = PrefixPartition.blocks(ranges6, bitWidth: 128).filter { $0.label == wanted }.map {
            PrefixPartition.range($0, bitWidth: 128)
        }
    }
}

/// Which filtered clients are kept to the web (docs/network.md#egress), chosen in the
/// same order as `ClientSets`: a MAC entry, then the longest address or CIDR, then the
/// default profile. Only clients `ClientSets` already caught are asked, so an exempt
/// client never reaches these sets.
struct EgressSets: Equatable {
    /// Filtered MAC entries whose profile is `web`; the other filtered MACs are `open`.
    var webMACs: [MACAddress]
    /// Whoever no entry covers is kept to the web (the default profile filters and is `web`).
    var defaultWeb: Bool
    /// With `defaultWeb`, the addresses whose longest entry is not `web`; otherwise those
    /// whose longest entry is. Disjoint CIDR blocks, in address order.
    var addresses4: [AddressRange]
    var addresses6: [AddressRange]
    /// Whether any client can be kept to the web: without one the table has no egress rules.
    var anyWeb: Bool

    /// `web(name)`: whether the profile `name` is kept to the web; `none` never is.
    init(_ roster: ProfileRoster, web: (String) -> Bool) {
        func isWeb(_ name: String) -> Bool { name != Profile.noneName && web(name) }
        var macs: Set<MACAddress> = []
        var ranges4: [(range: AddressRange, label: Bool)] = []
        var ranges6: [(range: AddressRange, label: Bool)] = []
        for member in roster.members {
            let label = isWeb(member.name)
            for entry in member.clients {
                switch entry {
                case .mac(let mac): if label { macs.insert(mac) }
                case .range(let range):
                    if range.isV4 { ranges4.append((range, label)) } else { ranges6.append((range, label)) }
                }
            }
        }
        webMACs = macs.sorted { $0.value < $1.value }
        defaultWeb = isWeb(roster.defaultProfile)
        let wanted = !defaultWeb
        addresses4 = PrefixPartition.blocks(ranges4, bitWidth: 32).filter { $0.label == wanted }.map {
            PrefixPartition.range($0, bitWidth: 32)
        }
        addresses6 = PrefixPartition.blocks(ranges6, bitWidth: 128).filter { $0.label == wanted }.map {
            PrefixPartition.range($0, bitWidth: 128)
        }
        anyWeb = defaultWeb || roster.members.contains { isWeb($0.name) }
    }
}
