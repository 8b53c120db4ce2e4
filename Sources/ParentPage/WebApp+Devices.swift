import Devices
import DomainMatch
import Policy
import Store
import Zoneinfo

/// The Devices page and `/api/devices` (docs/parent-page.md#pages): every device seen in
/// the last 30 days with what the gateway and the network know of it, the profile that
/// serves it now and why, and which are new since the parent last marked them seen.
extension WebApp {
    /// The page mark (`Store.pageMark`) up to which the parent has seen the devices.
    static let devicesSeenMark = "devices_seen"

    /// A device as the Devices page lists it.
    struct Device {
        let mac: String?
        let client: String
        var addresses: [String] = []
        /// The parent's name for it.
        var name: String?
        var assigned: String?
        /// The profiles that served it.
        var profiles: [String] = []
        var firstSeen: Int64
        var lastSeen: Int64
        /// Whether the gateway served it (a device only named on the page may never have asked).
        var seen = false
        /// The host name it gave the DHCP server.
        var leaseName: String?
        /// Its address's name by reverse DNS, for a device the leases do not name.
        var dnsName: String?
        var vendor: String?
        /// Its MAC address is locally administered (a phone's private address): no vendor.
        var privateAddress = false
        var isNew = false
        var profileNow = ""
        var why = ""

        /// What the page calls it: the parent's name first, then the DHCP host name, then
        /// its name by reverse DNS.
        var label: String { name ?? leaseName ?? dnsName ?? client }
    }

    func devices() throws -> [Device] {
        let named = Dictionary(try store.devices().map { ($0.mac, $0) }, uniquingKeysWith: { first, _ in first })
        var byClient: [String: Device] = [:]
        for sighting in try store.sightings(since: now - 30 * 86_400) {
            var device =
                byClient[sighting.client]
                ?? Device(
                    mac: sighting.mac, client: sighting.client, firstSeen: sighting.firstSeen,
                    lastSeen: sighting.lastSeen)
            if let address = sighting.address, !device.addresses.contains(address) { device.addresses.append(address) }
            if !device.profiles.contains(sighting.profile) { device.profiles.append(sighting.profile) }
            device.firstSeen = min(device.firstSeen, sighting.firstSeen)
            device.lastSeen = max(device.lastSeen, sighting.lastSeen)
            device.seen = true
            byClient[sighting.client] = device
        }
        for (mac, row) in named where byClient[mac] == nil {
            byClient[mac] = Device(mac: mac, client: mac, firstSeen: row.changedAt, lastSeen: row.changedAt)
        }
        for (key, device) in byClient {
            guard let mac = device.mac ?? (MACAddress(key) != nil ? key : nil), let row = named[mac] else { continue }
            byClient[key]?.name = row.name
            byClient[key]?.assigned = row.profile
        }
        var list = byClient.values.sorted { ($1.lastSeen, $0.client) < ($0.lastSeen, $1.client) }
        try describe(&list)
        return list
    }

    /// Adds what the lease file, the vendor registry and the profile table say of each
    /// device, and whether it is new.
    private func describe(_ list: inout [Device]) throws {
        let seenThrough = try store.pageMark(Self.devicesSeenMark)
        let table = household.currentEngine().profiles
        var namesByMAC: [MACAddress: String] = [:]
        var namesByAddress: [IPAddress: String] = [:]
        for lease in deviceFacts.currentLeases(log: log) {
            guard let hostName = lease.hostName else { continue }
            namesByMAC[lease.mac] = hostName
            if let address = lease.address { namesByAddress[address] = hostName }
        }
        let macs = list.compactMap { $0.mac.flatMap(MACAddress.init) }
        let vendors = deviceFacts.vendors.vendors(for: Set(macs))
        for index in list.indices {
            var device = list[index]
            let mac = device.mac.flatMap(MACAddress.init) ?? MACAddress(device.client)
            let address = device.addresses.first.flatMap(IPAddress.init) ?? IPAddress(device.client)
            // A device known by address only (no neighbour entry) is named by its lease's address.
            device.leaseName = mac.flatMap { namesByMAC[$0] } ?? address.flatMap { namesByAddress[$0] }
            if device.leaseName == nil, let address, let reverseName = deviceFacts.reverseName {
                device.dnsName = reverseName(address)
            }
            if let mac {
                device.vendor = vendors[mac]
                device.privateAddress = mac.isLocallyAdministered
            }
            let client = Client(address: address, mac: mac)
            device.profileNow = table.choose(client).name
            device.why = Self.why(table.reason(client))
            // A device the parent named or assigned is one they know, whenever it came.
            device.isNew =
                device.seen && device.name == nil && device.assigned == nil
                && device.firstSeen > (seenThrough ?? .min)
            list[index] = device
        }
    }

    /// Why the profile serves a device, in the parent's words.
    static func why(_ reason: ProfileTable.Reason) -> String {
        switch reason {
        case .proxyUser(let user): "proxy user \(user)"
        case .assigned: "assigned on the page"
        case .mac(let mac): "MAC entry \(mac) of the configuration"
        case .address(let entry): "address entry \(entry) of the configuration"
        case .fallback: "default_profile: no entry of the configuration names it"
        }
    }

    /// Marks every device first seen up to `through` as seen.
    func markDevicesSeen(through: Int64, client: String) throws {
        try store.advancePageMark(Self.devicesSeenMark, to: through)
        log.info("devices_marked_seen", [("through", Timestamp.rfc3339(through)), ("client", client)])
    }

    func devicesPage(csrf: String) throws -> String {
        let zone = household.currentEngine().zone
        let profiles = household.currentEngine().profiles.profiles.map(\.name).filter { $0 != Profile.noneName }
        let list = try devices()
        var body = "<h2>Devices</h2>"
        let fresh = list.filter(\.isNew).count
        if fresh > 0 {
            // The instant the page was made, not of the click: a device that comes while
            // the parent reads stays new.
            body +=
                "<p><span class=\"new\">\(fresh) new</span> since you last marked them seen "
                + Pages.button(
                    "Mark all as seen", action: "/devices/seen", csrf: csrf,
                    fields: [("through", "\(now)"), ("back", "/devices")]) + "</p>"
        }
        body +=
            "<table class=\"devices\"><thead><tr><th>Device</th><th>Seen</th><th>Profile</th></tr></thead><tbody>"
        for device in list {
            body += "<tr><td class=\"device\">\(Escape.html(device.label))"
            if device.isNew { body += " <span class=\"new\">new</span>" }
            if let leaseName = device.leaseName, device.name != nil, leaseName != device.name {
                body += "<br><span class=\"muted\">DHCP name: \(Escape.html(leaseName))</span>"
            }
            if let dnsName = device.dnsName, device.name != nil, dnsName != device.name {
                body += "<br><span class=\"muted\">DNS name: \(Escape.html(dnsName))</span>"
            }
            body += "<br><span class=\"muted\">\(Escape.html(device.client))"
            if !device.addresses.isEmpty { body += " · " + Escape.html(device.addresses.joined(separator: ", ")) }
            if let vendor = device.vendor {
                body += "<br>\(Escape.html(vendor))"
            } else if device.privateAddress {
                body += "<br>private address"
            }
            body +=
                "</span></td><td>first \(Escape.html(Times.local(device.firstSeen, now: now, zone: zone)))"
                + "<br>last \(Escape.html(Times.local(device.lastSeen, now: now, zone: zone)))</td>"
            body +=
                "<td><strong>\(Escape.html(device.profileNow))</strong> "
                + "<span class=\"muted\">(\(Escape.html(device.why)))</span><br>"
            if let mac = device.mac {
                var options = "<option value=\"\">(configuration)</option>"
                for name in profiles {
                    let selected = device.assigned == name ? " selected" : ""
                    options += "<option value=\"\(Escape.html(name))\"\(selected)>\(Escape.html(name))</option>"
                }
                body +=
                    "<form method=\"post\" action=\"/devices/\(Escape.html(Escape.url(mac)))\">"
                    + "<input type=\"hidden\" name=\"csrf_token\" value=\"\(Escape.html(csrf))\">"
                    + "<input type=\"hidden\" name=\"back\" value=\"/devices\">"
                    + "<input type=\"text\" name=\"name\" maxlength=\"64\" value=\"\(Escape.html(device.name ?? ""))\" placeholder=\"\(Escape.html(device.leaseName ?? device.dnsName ?? "name"))\">"
                    + "<select name=\"profile\">\(options)</select> <button>Save</button></form>"
            } else {
                body +=
                    "<span class=\"muted\">known by address only, served by \(Escape.html(device.profiles.joined(separator: ", ")))</span>"
            }
            body += "</td></tr>"
        }
        body += "</tbody></table>"
        return Pages.document(title: "Devices", body: body, csrf: csrf)
    }

    func deviceJSON(_ device: Device) -> String {
        "{\"mac\": \(optional(device.mac)), \"client\": \(Escape.json(device.client)), "
            + "\"addresses\": [\(device.addresses.map(Escape.json).joined(separator: ", "))], "
            + "\"name\": \(optional(device.name)), \"lease_name\": \(optional(device.leaseName)), "
            + "\"dns_name\": \(optional(device.dnsName)), "
            + "\"vendor\": \(optional(device.vendor)), \"profile\": \(optional(device.assigned)), "
            + "\"profile_now\": \(Escape.json(device.profileNow)), \"why\": \(Escape.json(device.why)), "
            + "\"seen_by\": [\(device.profiles.map(Escape.json).joined(separator: ", "))], "
            + "\"new\": \(device.isNew), "
            + "\"first_seen\": \(Escape.json(Timestamp.rfc3339(device.firstSeen))), "
            + "\"last_seen\": \(Escape.json(Timestamp.rfc3339(device.lastSeen)))}"
    }
}
