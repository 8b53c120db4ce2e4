import Blocklists
import Gateway
import HTTPClient

/// What one download brought.
enum Download {
    /// `304 Not Modified`: the copy in place is current.
    case notModified
    /// A new body, and the validators to send next time.
    case body([UInt8], SourceValidators)
}

/// Why a download brought nothing usable: one line of the update report.
enum DownloadError: Error, CustomStringConvertible {
    case status(Int, String)
    case transfer(HTTPError, limit: Int, timeout: Duration)
    case redirect(String)

    var description: String {
        switch self {
        case .status(let code, let reason): return "HTTP \(code) \(reason)"
        case .redirect(let why): return why
        case .transfer(let error, let limit, let timeout):
            switch error {
            case .responseTooLarge: return "larger than the size limit of \(limit) bytes (list_max_size)"
            case .timeout(let phase): return "timed out \(phase.rawValue) (list_timeout \(timeout))"
            case .closed: return "truncated: the connection closed before the whole list arrived"
            case .tls(let tls): return "TLS: \(tls)"
            default: return error.description
            }
        }
    }
}

/// Fetches one source over HTTPS with the project's client: the certificate checked
/// (against `ca_file` when set), the body at most `list_max_size`, the whole exchange
/// within `list_timeout`, conditional when validators are given (RFC 9110 §13.1), and up
/// to five redirects, each to HTTPS only.
struct ListDownloader {
    let client: HTTPClient

    static let maxRedirects = 5

    func fetch(_ url: String, conditional headers: [(String, String)]) throws(DownloadError) -> Download {
        var target: HTTPURL
        do { target = try HTTPURL(url) } catch { throw .transfer(error, limit: limit, timeout: timeout) }
        var hops = 0
        while true {
            guard target.scheme == .https else { throw .redirect("refused a redirect to \(target): not HTTPS") }
            let response: HTTPResponse
            do {
                response = try client.send(HTTPRequest(url: target, headers: headers))
            } catch {
                throw .transfer(error, limit: limit, timeout: timeout)
            }
            switch response.status {
            case 200:
                let validators = SourceValidators(
                    url: url, etag: response.header("ETag"), lastModified: response.header("Last-Modified"))
                return .body(response.body, validators)
            case 304:
                return .notModified
            case 301, 302, 303, 307, 308:
                hops += 1
                guard hops <= Self.maxRedirects else { throw .redirect("more than \(Self.maxRedirects) redirects") }
                guard let location = response.header("Location") else {
                    throw .redirect("HTTP \(response.status) without a Location")
                }
                target = try Self.resolve(location, against: target)
            default:
                throw .status(response.status, response.reason)
            }
        }
    }

    private var limit: Int { client.maxResponseBytes }
    private var timeout: Duration { client.requestTimeout }

    /// A `Location` value as a URL: absolute, or a path on the same origin (RFC 9110 §10.2.2).
    static func resolve(_ location: String, against base: HTTPURL) throws(DownloadError) -> HTTPURL {
        let text =
            location.hasPrefix("/") && !location.hasPrefix("//") ? "https://\(base.authority)\(location)" : location
        do { return try HTTPURL(text) } catch { throw .redirect("redirected to \(error)") }
    }
}
