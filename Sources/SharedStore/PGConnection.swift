import CLibPQ
import Glibc

/// One connection to PostgreSQL through libpq: statements with text parameters (values
/// only ever reach SQL as parameters), rows as text. Blocking; one thread at a time.
public final class PGConnection {
    private var handle: OpaquePointer?

    /// `url`: a `postgresql://` URL (libpq reads `sslmode` and the rest from it); the
    /// password, when given, is passed beside it, never in the URL or a message.
    public init(url: String, password: String?, connectTimeoutSeconds: Int = 5) throws(SharedStoreError) {
        guard url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") else {
            throw .badURL("\"\(url.split(separator: "@").last ?? "")\" is not a postgresql:// URL")
        }
        var keywords = ["dbname", "connect_timeout", "application_name"]
        var values = [url, "\(max(connectTimeoutSeconds, 1))", "phosra-gate"]
        if let password {
            keywords.append("password")
            values.append(password)
        }
        let connection = Self.withCStrings(keywords) { keys in
            Self.withCStrings(values) { vals in PQconnectdbParams(keys, vals, 1) }
        }
        guard let connection else { throw .connect("out of memory") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.message(PQerrorMessage(connection))
            PQfinish(connection)
            throw .connect(message)
        }
        // libpq prints the server's notices (NOTICE: relation … already exists) on stderr,
        // which is the daemon's log: they are expected and said nothing the log needs.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
    }

    deinit { close() }

    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// Whether the connection still stands (libpq's view after the last statement).
    public var isOpen: Bool { handle.map { PQstatus($0) == CONNECTION_OK } ?? false }

    /// Runs `sql` with `parameters` as `$1`, `$2`, … (nil is NULL); returns the rows, each
    /// value as text or nil for NULL.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?] = []) throws(SharedStoreError) -> [[String?]] {
        guard let handle else { throw .lost("closed") }
        let result = Self.withOptionalCStrings(parameters) { values in
            PQexecParams(handle, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        defer { PQclear(result) }
        guard let result else { throw failure(sql, nil) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK:
            return []
        case PGRES_TUPLES_OK:
            var rows: [[String?]] = []
            let columns = PQnfields(result)
            for row in 0..<PQntuples(result) {
                rows.append(
                    (0..<columns).map { column in
                        PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
                    })
            }
            return rows
        default:
            throw failure(sql, result)
        }
    }

    /// Runs several statements with no parameters (a migration step), in the simple
    /// query protocol, which a statement with parameters cannot use.
    public func script(_ sql: String) throws(SharedStoreError) {
        guard let handle else { throw .lost("closed") }
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        guard let result, PQresultStatus(result) == PGRES_COMMAND_OK || PQresultStatus(result) == PGRES_TUPLES_OK
        else { throw failure(sql, result) }
    }

    /// The connection's socket, to wait on for notifications; -1 when closed.
    public var socket: Int32 { handle.map { PQsocket($0) } ?? -1 }

    /// Reads what the server sent (after the socket was readable) and returns the
    /// payloads of the notifications that came, in order.
    public func notifications() throws(SharedStoreError) -> [String] {
        guard let handle else { throw .lost("closed") }
        guard PQconsumeInput(handle) == 1 else { throw .lost(Self.message(PQerrorMessage(handle))) }
        var payloads: [String] = []
        while let notice = PQnotifies(handle) {
            payloads.append(notice.pointee.extra.map { String(cString: $0) } ?? "")
            PQfreemem(notice)
        }
        return payloads
    }

    private func failure(_ sql: String, _ result: OpaquePointer?) -> SharedStoreError {
        guard let handle, PQstatus(handle) == CONNECTION_OK else {
            return .lost(handle.map { Self.message(PQerrorMessage($0)) } ?? "closed")
        }
        let state = result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "C"))) }.map { String(cString: $0) }
        let message =
            result.flatMap { PQresultErrorField($0, Int32(UInt8(ascii: "M"))) }.map { String(cString: $0) }
            ?? Self.message(PQerrorMessage(handle))
        return .statement(sql: sql, state: state ?? "?????", message: message)
    }

    /// libpq's message on one line.
    static func message(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown error" }
        return String(cString: text).split(whereSeparator: \.isNewline).map { $0.trimmingSpaces }.joined(separator: " ")
    }

    private static func withCStrings<T>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
        withOptionalCStrings(strings.map { Optional($0) }) { pointers in
            body(pointers + [nil])
        }
    }

    private static func withOptionalCStrings<T>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
        let copies: [UnsafeMutablePointer<CChar>?] = strings.map { text in text.flatMap { strdup($0) } }
        defer { for copy in copies { free(copy) } }
        return body(copies.map { $0.map { UnsafePointer($0) } })
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
