import Blocklists
import DomainMatch
import Firewall
import Gateway
import Policy
import SystemIO

/// Brings one source's copy in the state directory up to date (docs/blocklists.md#updating-lists):
/// download (conditional when a copy is in place), check, write aside, fsync, rename. Any
/// failure leaves the copy in place untouched and says why.
struct SourceUpdate {
    /// `STATE_DIR/lists`.
    let folder: String
    let downloader: ListDownloader
    /// `--force`: take a list that shrank by more than half.
    let force: Bool

    enum Outcome {
        case updated(names: Int, previous: Int?)
        /// Nothing written: `why` (not modified, or the same bytes as the copy in place).
        case unchanged(why: String)
        case failed(why: String, previous: Int?)
    }

    /// Updates `source`; `validators` holds what the servers said last time and gets what
    /// they say now.
    func run(_ source: ListSource, validators: inout ValidatorTable) -> Outcome {
        let path = folder + "/" + source.file
        let previous = try? Files.read(path, limit: max(downloader.client.maxResponseBytes, Files.defaultReadLimit))
        let previousNames = previous.flatMap { Self.count($0, source.format) }
        let conditional =
            previous == nil ? [] : validators.entries[source.file]?.conditionalHeaders(for: source.url) ?? []
        let body: [UInt8]
        let fresh: SourceValidators
        do {
            switch try downloader.fetch(source.url, conditional: conditional) {
            case .notModified:
                guard previous != nil else {
                    return .failed(why: "304 Not Modified, but there is no copy to keep", previous: nil)
                }
                return .unchanged(why: "not modified since the last download")
            case .body(let bytes, let validators):
                body = bytes
                fresh = validators
            }
        } catch {
            return .failed(why: error.description, previous: previousNames)
        }
        let names: Int
        switch Self.check(body, source.format).flatMap({
            DownloadCheck.replaces(names: $0, previous: previousNames, force: force)
        }) {
        case .success(let count): names = count
        case .failure(let refusal): return .failed(why: refusal.description, previous: previousNames)
        }
        validators.entries[source.file] = fresh
        if previous == body { return .unchanged(why: "the same \(names) names as the copy in place") }
        do {
            try Files.makeDirectories(Files.directory(of: path))
            try Files.writeAtomically(path, body)
        } catch {
            validators.entries[source.file] = nil
            return .failed(why: "cannot write it: \(error)", previous: previousNames)
        }
        return .updated(names: names, previous: previousNames)
    }

    /// How many names (or addresses) a body holds, or why it is not a list of its format.
    static func check(_ body: [UInt8], _ format: ListSource.Format) -> Result<Int, ListRefusal> {
        if format == .services {
            if body.contains(0) { return .failure(.notAList("it holds binary data (a NUL byte)")) }
            do {
                let catalogue = try ServiceCatalogue.decode(body)
                return catalogue.services.isEmpty
                    ? .failure(.notAList("no services in it")) : .success(catalogue.services.count)
            } catch {
                return .failure(.notAList("not a service catalogue: \(error)"))
            }
        }
        guard format == .addresses else { return DownloadCheck.categoryList(body).map(\.names) }
        if body.contains(0) { return .failure(.notAList("it holds binary data (a NUL byte)")) }
        do {
            let entries = try DoHAddressList.parse(String(decoding: body, as: UTF8.self), path: "")
            return entries.isEmpty ? .failure(.notAList("no addresses in it")) : .success(entries.count)
        } catch {
            return .failure(.notAList("line \(error.line), \"\(error.text)\", is not an IPv4 or IPv6 address or CIDR"))
        }
    }

    /// The names of the copy in place, for the shrink guard; nil when it does not read.
    private static func count(_ bytes: [UInt8], _ format: ListSource.Format) -> Int? {
        if format == .services { return try? ServiceCatalogue.decode(bytes).services.count }
        guard format == .addresses else { return ListFile.parse(bytes) { _ in }.names }
        return try? DoHAddressList.parse(String(decoding: bytes, as: UTF8.self), path: "").count
    }
}
