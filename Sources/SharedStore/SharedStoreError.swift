/// What went wrong with the shared store, and where. A message never carries the
/// password: libpq's own messages name the host, port, user and database only.
public enum SharedStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `shared_store` is not a `postgresql://` or `postgres://` URL.
    case badURL(String)
    /// The password file could not be read.
    case passwordFile(path: String, reason: String)
    /// The server could not be reached or refused the connection.
    case connect(String)
    /// A statement failed: its SQLSTATE and the server's message.
    case statement(sql: String, state: String, message: String)
    /// The connection was lost (the server stopped or the network went).
    case lost(String)
    /// The database's schema is newer than this build knows.
    case newerSchema(found: Int, supported: Int)
    /// A row of the shared store that is not one a gateway writes (a table and its key).
    case malformed(String, String)
    /// This gateway's own store failed while copying to or from the shared one.
    case local(String)

    public var description: String {
        switch self {
        case .badURL(let text): "shared_store: \(text)"
        case .passwordFile(let path, let reason): "shared_store_password_file \(path): \(reason)"
        case .connect(let message): "cannot connect to the shared store: \(message)"
        case .statement(let sql, let state, let message):
            "the shared store refused \(sql.split(separator: " ").prefix(3).joined(separator: " ")) … (SQLSTATE \(state)): \(message)"
        case .lost(let message): "the shared store's connection was lost: \(message)"
        case .newerSchema(let found, let supported):
            "the shared store's schema is version \(found); this build knows up to \(supported)"
        case .malformed(let table, let key): "the shared store's \(table) row \(key) is malformed"
        case .local(let message): "the local store: \(message)"
        }
    }
}
