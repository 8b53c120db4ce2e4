import HTTP1
import Policy

/// The proxy users of the profiles and how to check a password (docs/proxy.md#proxy-authentication).
/// ProxyCore links no cryptography: the gateway hands in a check that verifies the stored
/// scrypt hashes (or plain values) in constant time and remembers recent successes, so a
/// keep-alive browser does not pay scrypt per request. Compared by identity: a new
/// configuration makes a new one.
public final class ProxyLogins: Sendable, Equatable {
    private let check: @Sendable (String, [UInt8]) -> Bool

    public init(_ check: @escaping @Sendable (_ user: String, _ password: [UInt8]) -> Bool) {
        self.check = check
    }

    /// Whether `password` is `user`'s; false for a user no profile has.
    public func verify(user: String, password: [UInt8]) -> Bool { check(user, password) }

    public static func == (lhs: ProxyLogins, rhs: ProxyLogins) -> Bool { lhs === rhs }
}

extension ProxyConnection {
    /// Proxy authentication, before a request is decided: credentials, when sent, must be
    /// right (else `407`; after too many failures from this address, `429` for the rest of
    /// the minute, right credentials included), and then choose the profile; without them,
    /// `proxy_auth = required` refuses a client that no MAC or address entry covers. Nil:
    /// go on with the request. The password is never kept, logged or echoed.
    mutating func authenticate(_ head: RequestHead, _ env: ProxyEnvironment) -> [ProxyAction]? {
        proxyUser = nil
        let credentials: BasicCredentials?
        do {
            credentials = try BasicCredentials.from(head.fields)
        } catch {
            return loginFailed(env)
        }
        guard let credentials else {
            let device = Client(address: client, mac: clientMAC)
            guard env.settings.authMode == .required, !env.snapshot.engine.profiles.coversByDevice(device) else {
                return nil
            }
            ProxyResponse.authenticationRequired(keepAlive: false, to: &clientOut)
            return closeAfterResponse(env)
        }
        if case .tooMany(let retryAfter)? = env.authLimiter?.check(client, now: env.now) {
            ProxyResponse.tooManyAuthenticationFailures(retryAfter: retryAfter, to: &clientOut)
            return closeAfterResponse(env)
        }
        guard let logins = env.settings.logins, logins.verify(user: credentials.user, password: credentials.password)
        else {
            return loginFailed(env)
        }
        proxyUser = credentials.user
        return nil
    }

    private mutating func loginFailed(_ env: ProxyEnvironment) -> [ProxyAction] {
        env.authLimiter?.recordFailure(client, now: env.now)
        ProxyResponse.authenticationRequired(keepAlive: false, to: &clientOut)
        return closeAfterResponse(env)
    }
}
