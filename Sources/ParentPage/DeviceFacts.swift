import Devices
import DomainMatch
import SystemIO

/// What the network says of a device beyond what the gateway saw of it: the host name it
/// gave the DHCP server (`dhcp_leases`), else its name by reverse DNS, and the vendor
/// behind its MAC address (the IEEE registry of Debian's `ieee-data`). Read when the Devices page or `/api/devices` asks,
/// never before: a gateway whose parent never opens the page reads neither file.
///
/// Threading: the page's loop thread only; the reads block it briefly, as the store does.
public final class DeviceFacts {
    let leases: LeaseFile?
    let vendors: VendorCache
    /// A device's name by reverse DNS when known (asked elsewhere, never waited for here).
    let reverseName: (@Sendable (IPAddress) -> String?)?

    /// `leasePath` nil or empty: no lease names. `reverseName` nil: no names by reverse DNS.
    public init(
        leasePath: String?, vendorDirectory: String = "/usr/share/ieee-data",
        reverseName: (@Sendable (IPAddress) -> String?)? = nil
    ) {
        leases = leasePath.flatMap { $0.isEmpty ? nil : LeaseFile(path: $0) }
        vendors = VendorCache(VendorLookup(directory: vendorDirectory))
        self.reverseName = reverseName
    }

    /// The leases now. A file that cannot be read or understood gives none and one
    /// warning, not one per page view: the page shows the devices without their names.
    func currentLeases(log: Logger) -> [Lease] {
        guard let leases else { return [] }
        if let problem = leases.refresh() {
            log.warn("dhcp_leases_unreadable", [("error", "\(problem)")])
        }
        return leases.leases
    }
}

/// The lease file, read again only when its size or modification time changed.
final class LeaseFile {
    let path: String
    private(set) var leases: [Lease] = []
    private var stamp: FileStatus?
    private var problem: DevicesError?

    init(path: String) { self.path = path }

    /// Reads the file again if it changed. Returns a problem only when it is new, so the
    /// caller logs a file that stays missing once; after a good read, a later problem is
    /// new again.
    func refresh() -> DevicesError? {
        let status: FileStatus
        do throws(SystemError) {
            status = try Files.status(path)
        } catch {
            stamp = nil
            leases = []
            return note(.unreadable(path: path, error))
        }
        guard status != stamp else { return nil }
        stamp = status
        do throws(DevicesError) {
            leases = try DHCPLeases.read(path: path)
            problem = nil
            return nil
        } catch {
            leases = []
            return note(error)
        }
    }

    private func note(_ found: DevicesError) -> DevicesError? {
        defer { problem = found }
        return found == problem ? nil : found
    }
}

/// Each MAC address's vendor, looked up once. `VendorLookup` streams the registry (about
/// 6 MB) without holding it and keeps only the names asked for, so the registry is read
/// again only when a page shows an address not looked up before, and memory holds one
/// name per device. A new registry (an `ieee-data` upgrade) starts the cache afresh.
final class VendorCache {
    /// More devices than a home has; past it the cache starts again rather than grow.
    static let capacity = 4096

    let lookup: VendorLookup
    /// nil: the registry names none.
    private var known: [MACAddress: String?] = [:]
    private var registryStamp: FileStatus?

    init(_ lookup: VendorLookup) { self.lookup = lookup }

    func vendors(for macs: Set<MACAddress>) -> [MACAddress: String] {
        let stamp = try? Files.status(lookup.directory + "/" + VendorLookup.registryFiles[0])
        if stamp != registryStamp {
            registryStamp = stamp
            known.removeAll()
        }
        let missing = macs.filter { known.index(forKey: $0) == nil }
        if !missing.isEmpty {
            if known.count + missing.count > Self.capacity { known.removeAll() }
            let found = lookup.vendors(for: missing)
            for mac in missing { known[mac] = .some(found[mac]) }
        }
        var result: [MACAddress: String] = [:]
        for mac in macs {
            if case .some(.some(let name)) = known[mac] { result[mac] = name }
        }
        return result
    }
}
