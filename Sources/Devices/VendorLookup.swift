import DomainMatch
import SystemIO

/// The vendor behind each device's MAC address, from the IEEE registry as Debian's
/// `ieee-data` package ships it (`oui.csv` MA-L 24-bit, `mam.csv` MA-M 28-bit,
/// `oui36.csv` MA-S 36-bit, `iab.csv` the IAB 36-bit blocks MA-S replaced).
///
/// Built for a small device: the registry (about 6 MB of CSV) is never held. Each call
/// streams the files once in 64 KiB chunks and keeps only the names of the rows that
/// match one of the addresses asked about, so it costs the chunk, the addresses and their
/// names. The longest assignment wins: an MA-S or MA-M block inside an MA-L block the
/// IEEE holds for subdividing names the organisation it was given to. A locally
/// administered address (`MACAddress.isLocallyAdministered`, a phone's private address)
/// gets no vendor. A missing or unreadable file gives no vendors from it, not an error:
/// the package is optional. Blocking: call it from the page's handler, not an event loop.
///
/// The names are the registry's text, trimmed, at most 256 bytes, invalid UTF-8
/// replaced: whoever displays them escapes them.
public struct VendorLookup: Sendable {
    /// The CSV files read, relative to `directory`; the order does not matter.
    public static let registryFiles = ["oui.csv", "mam.csv", "oui36.csv", "iab.csv"]
    static let chunkBytes = 64 << 10

    public let directory: String

    public init(directory: String = "/usr/share/ieee-data") {
        self.directory = directory
    }

    /// The vendor of each address in `macs` the registry names; an address it does not
    /// (or a locally administered one) has no entry.
    public func vendors(for macs: Set<MACAddress>) -> [MACAddress: String] {
        let matches = VendorMatches(macs.filter { !$0.isLocallyAdministered })
        guard !matches.isEmpty else { return [:] }
        var rows = RegistryRows(sink: matches)
        for file in Self.registryFiles {
            do {
                try Files.forEachChunk(directory + "/" + file, chunkSize: Self.chunkBytes) { rows.consume($0) }
                rows.finish()
            } catch {
                rows.abandon()
            }
        }
        return rows.sink.vendors
    }
}

/// The addresses asked about, by their prefix of each assignment width, and the best
/// (longest) match found so far for each.
struct VendorMatches: RegistrySink {
    /// Hex digits of an assignment → prefix → the addresses under it.
    private var byPrefix: [Int: [UInt64: [MACAddress]]] = [:]
    private var best: [MACAddress: (digits: Int, name: String)] = [:]

    init(_ macs: some Sequence<MACAddress>) {
        for mac in macs {
            for digits in [6, 7, 9] {
                byPrefix[digits, default: [:]][mac.value >> UInt64(48 - 4 * digits), default: []].append(mac)
            }
        }
    }

    var isEmpty: Bool { byPrefix.isEmpty }

    var vendors: [MACAddress: String] { best.mapValues(\.name) }

    func wants(_ assignment: UInt64, digits: Int) -> Bool {
        byPrefix[digits]?[assignment] != nil
    }

    mutating func found(_ assignment: UInt64, digits: Int, name: [UInt8]) {
        guard let macs = byPrefix[digits]?[assignment], let name = Self.trimmed(name) else { return }
        for mac in macs where (best[mac]?.digits ?? 0) < digits {
            best[mac] = (digits, name)
        }
    }

    static func trimmed(_ name: [UInt8]) -> String? {
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || (0x09...0x0D).contains($0) }
        guard let first = name.firstIndex(where: { !blank($0) }), let last = name.lastIndex(where: { !blank($0) })
        else { return nil }
        return String(decoding: name[first...last], as: UTF8.self)
    }
}
