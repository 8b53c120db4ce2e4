import Foundation

/// An HTTPS server on 127.0.0.1 serving block lists for `blocklists update` tests, with
/// the certificate of a throw-away test CA. Each path behaves as the test sets it: a list
/// with validators (answering `304` to a matching conditional request), an error status,
/// silence, a cut body, or any body.
public final class TestListServer: @unchecked Sendable {
    // Sendable: immutable after init; behaviours and requests seen live in `State`, behind its lock.
    public enum Behaviour: Sendable {
        /// `200` with `text`, its `ETag` and `Last-Modified` when given; `304 Not Modified`
        /// when the request's `If-None-Match` or `If-Modified-Since` matches them.
        case list(String, etag: String? = nil, lastModified: String? = nil)
        /// This status with a short text body.
        case status(Int)
        /// Never answers.
        case hang
        /// `200` announcing `Content-Length` of the whole text, then half of it and a close.
        case truncated(String)
        /// `301 Moved Permanently` to this `Location`.
        case redirect(String)
    }

    public let certificates: TestCertificates
    private let state = State()
    private var server: TestHTTPServer!

    public init(certificates: TestCertificates? = nil) throws {
        let certificates = try certificates ?? TestCertificates()
        self.certificates = certificates
        let state = self.state
        server = try TestHTTPServer(tls: try TestTLSServerContext(certificates), idleTimeout: .seconds(30)) { request in
            state.record(request)
            return Self.reply(to: request, state.behaviour(request.path))
        }
    }

    /// `https://127.0.0.1:PORT/path`.
    public func url(_ path: String) -> String { "\(server.origin)/\(path)" }

    public func set(_ path: String, _ behaviour: Behaviour) { state.set("/" + path, behaviour) }

    /// The requests for `path` so far, oldest first.
    public func requests(_ path: String) -> [TestHTTPServer.Request] { state.requests.filter { $0.path == "/" + path } }

    public func stop() { server.stop() }

    /// A manifest naming `sources` (category nil: an addresses list), each at `url(path)`.
    public func manifest(_ sources: [(category: String?, name: String, path: String, format: String)]) -> String {
        let entries = sources.map { source in
            let category = source.category.map { #""category": "\#($0)", "# } ?? ""
            return #"{\#(category)"name": "\#(source.name)", "url": "\#(url(source.path))", "#
                + #""format": "\#(source.format)", "licence": "MIT"}"#
        }
        return #"{"version": 1, "sources": [\#(entries.joined(separator: ",\n"))]}"#
    }

    private static func reply(to request: TestHTTPServer.Request, _ behaviour: Behaviour?) -> TestHTTPServer.Reply {
        switch behaviour {
        case nil:
            return .respond(.init(status: 404, text: "no such list\n"))
        case .list(let text, let etag, let lastModified)?:
            let matches =
                (etag != nil && request.header("If-None-Match") == etag)
                || (etag == nil && lastModified != nil && request.header("If-Modified-Since") == lastModified)
            var headers: [(String, String)] = [("Content-Type", "text/plain")]
            if let etag { headers.append(("ETag", etag)) }
            if let lastModified { headers.append(("Last-Modified", lastModified)) }
            if matches { return .respond(.init(status: 304, headers: headers)) }
            return .respond(.init(status: 200, headers: headers, text: text))
        case .status(let code)?:
            return .respond(.init(status: code, text: "status \(code)\n"))
        case .hang?:
            return .hang
        case .redirect(let location)?:
            return .respond(.init(status: 301, headers: [("Location", location)], text: "moved\n"))
        case .truncated(let text)?:
            let body = Array(text.utf8)
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.count)\r\n\r\n"
            return .raw(Array(head.utf8) + body.prefix(body.count / 2), close: true)
        }
    }

    private final class State: @unchecked Sendable {
        // Sendable: every field is touched only under `lock`.
        private let lock = NSLock()
        private var behaviours: [String: Behaviour] = [:]
        private var seen: [TestHTTPServer.Request] = []

        func set(_ path: String, _ behaviour: Behaviour) { lock.withLock { behaviours[path] = behaviour } }
        func behaviour(_ path: String) -> Behaviour? { lock.withLock { behaviours[path] } }
        func record(_ request: TestHTTPServer.Request) { lock.withLock { seen.append(request) } }
        var requests: [TestHTTPServer.Request] { lock.withLock { seen } }
    }
}
