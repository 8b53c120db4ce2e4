import SystemIO

/// Which gateway sends a notification that several may find (docs/two-gateways.md): the
/// first to claim its id in the shared store. Used by the notifier's thread alone, on a
/// connection of its own. While the shared store cannot be reached every claim is
/// `unknown`, and the event is sent anyway: a parent told twice is better than not told.
public final class NoticeClaims: @unchecked Sendable {
    // Sendable: one thread (the notifier's) uses it.
    public enum Claim: Equatable, Sendable {
        /// This gateway sends it (it claimed it now, or before).
        case mine
        /// Another gateway claimed it.
        case taken(by: String)
        /// The shared store could not say.
        case unknown(String)
    }

    let url: String
    let passwordFile: String?
    let gateway: String
    private let clock: any Clock
    private var connection: PGConnection?
    /// After a failed connection, none is tried again before this (monotonic seconds):
    /// the notifier must not wait seconds per event for a server that is away.
    private var retryAt: Int64 = 0

    public init(url: String, passwordFile: String?, gateway: String, clock: any Clock) {
        self.url = url
        self.passwordFile = passwordFile
        self.gateway = gateway
        self.clock = clock
    }

    public func claim(_ id: String, now: Int64) -> Claim {
        let monotonic = Int64(clock.now() / 1_000_000_000)
        if connection == nil {
            guard monotonic >= retryAt else { return .unknown("the shared store is unreachable") }
            do {
                connection = try PGConnection(
                    url: url, password: try SharedStore.password(file: passwordFile), connectTimeoutSeconds: 2)
            } catch {
                retryAt = monotonic + 30
                return .unknown(error.description)
            }
        }
        guard let connection else { return .unknown("closed") }
        do {
            // A no-op update returns the row that holds the id, whoever wrote it.
            let rows = try connection.execute(
                """
                INSERT INTO notices_sent (id, gateway, claimed_at) VALUES ($1, $2, $3)
                ON CONFLICT (id) DO UPDATE SET claimed_at = notices_sent.claimed_at
                RETURNING gateway
                """, [id, gateway, "\(now)"])
            guard let holder = rows.first?.first ?? nil else { return .unknown("no row") }
            return holder == gateway ? .mine : .taken(by: holder)
        } catch {
            connection.close()
            self.connection = nil
            retryAt = monotonic + 30
            return .unknown(error.description)
        }
    }

    public func close() {
        connection?.close()
        connection = nil
    }
}
