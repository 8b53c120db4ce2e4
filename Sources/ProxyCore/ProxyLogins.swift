import HTTP1
import Policy

/// The proxy users of the profiles and how to check a password (docs/proxy.md#proxy-authentication).
/// ProxyCore links no cryptography: the gateway hands in a check that verifies the stored
/// scrypt hashes (or plain values) in constant time, and a quick one that answers from the
/// recent successes it remembers, so a keep-alive browser does not pay scrypt per request.
/// Compared by identity: a new configuration makes a new one.
public final class ProxyLogins: Sendable, Equatable {
    private let remembered: @Sendable (String, [UInt8]) -> Bool
    private let check: @Sendable (String, [UInt8]) -> Bool

    /// - Parameters:
    ///   - remembered: whether this login succeeded recently; cheap (a keyed hash and a
    ///     set lookup), fit for a loop thread.
    ///   - check: the full verification (scrypt: tens of milliseconds); never called on a
    ///     loop thread by the proxy.
    public init(
        remembered: @escaping @Sendable (_ user: String, _ password: [UInt8]) -> Bool = { _, _ in false },
        check: @escaping @Sendable (_ user: String, _ password: [UInt8]) -> Bool
    ) {
        self.remembered = remembered
        self.check = check
    }

    /// Whether `password` is `user`'s by a recent success alone (false: ask `verify`).
    public func isRemembered(user: String, password: [UInt8]) -> Bool { remembered(user, password) }

    /// Whether `password` is `user`'s; false for a user no profile has. Slow (scrypt).
    public func verify(user: String, password: [UInt8]) -> Bool { check(user, password) }

    public static func == (lhs: ProxyLogins, rhs: ProxyLogins) -> Bool { lhs === rhs }
}

/// A login to check away from the loop thread (`ProxyAction.checkLogin`).
public struct LoginCheck: Sendable, Equatable {
    public let logins: ProxyLogins
    public let user: String
    let password: [UInt8]
    /// Nanoseconds to wait before checking: the user's turn (`UserLoginDelays`); 0 at once.
    public internal(set) var delay: UInt64 = 0

    /// The same check, its turn come.
    public var atOnce: LoginCheck {
        var check = self
        check.delay = 0
        return check
    }

    /// The full verification; blocks for scrypt's duration.
    public func run() -> LoginOutcome { logins.verify(user: user, password: password) ? .accepted : .rejected }
}

/// What a login check found.
public enum LoginOutcome: Sendable, Equatable {
    case accepted
    case rejected
    /// Too many checks were waiting: not counted as a failure, the client may retry.
    case busy
}

/// A request held while its credentials are checked.
public struct PendingLogin: Sendable, Equatable {
    let head: RequestHead
    let user: String

    public static func == (lhs: PendingLogin, rhs: PendingLogin) -> Bool {
        lhs.user == rhs.user && lhs.head.fields.bytes == rhs.head.fields.bytes
    }
}

extension ProxyConnection {
    /// Proxy authentication, before a request is decided: credentials, when sent, must be
    /// right (else `407`; after too many failures from this address or /64, `429` for the
    /// rest of the minute, right credentials included; after too many for the user from a
    /// device that has not logged in as it before, the check waits for the user's turn),
    /// and then choose the profile; without them,
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
        var delay: UInt64 = 0
        switch env.authLimiter?.check(client, user: credentials.user, device: loginDevice, now: env.now) {
        case .tooMany(let retryAfter)?:
            ProxyResponse.tooManyAuthenticationFailures(retryAfter: retryAfter, to: &clientOut)
            return closeAfterResponse(env)
        case .delayed(let wait)?: delay = wait
        case .allowed?, nil: break
        }
        guard let logins = env.settings.logins else { return loginFailed(env) }
        // A delayed guess is not answered from memory either: a quick yes to the right
        // password and a wait for every other would tell a guesser which is which.
        if delay == 0, logins.isRemembered(user: credentials.user, password: credentials.password) {
            proxyUser = credentials.user
            env.authLimiter?.recordSuccess(user: credentials.user, device: loginDevice, now: env.now)
            return nil
        }
        // scrypt would hold the loop thread, and every other client on it, for tens of
        // milliseconds: the request waits while the driver checks elsewhere.
        state = .authenticating(PendingLogin(head: head, user: credentials.user))
        deadline = env.now &+ delay &+ ProxyLimits.headTimeout
        return [
            .checkLogin(
                LoginCheck(logins: logins, user: credentials.user, password: credentials.password, delay: delay))
        ]
    }

    /// The device as the login limits remember it.
    var loginDevice: LoginDevice { LoginDevice(client, mac: deviceMAC) }

    /// The check asked for by `.checkLogin` finished: the held request goes on as its
    /// user's, or gets `407` (counted as a failure) or `503` (too many checks waiting).
    public mutating func loginChecked(_ outcome: LoginOutcome, _ env: ProxyEnvironment) -> [ProxyAction] {
        guard case .authenticating(let pending) = state else { return [] }
        state = .readingHead
        deadline = nil
        switch outcome {
        case .rejected: return loginFailed(env)
        case .busy: return fail(503, "too many proxy logins are being checked; try again", env)
        case .accepted:
            proxyUser = pending.user
            env.authLimiter?.recordSuccess(user: pending.user, device: loginDevice, now: env.now)
            var actions: [ProxyAction]
            do throws(ProxyError) {
                actions = try pending.head.isConnect ? tunnel(pending.head, env) : forward(pending.head, env)
            } catch {
                return refuse(error, env)
            }
            // A request answered here (a block page on keep-alive) may have pipelined ones behind it.
            if case .readingHead = state { actions += readHeads(env) }
            return actions
        }
    }

    private mutating func loginFailed(_ env: ProxyEnvironment) -> [ProxyAction] {
        env.authLimiter?.recordFailure(client, now: env.now)
        ProxyResponse.authenticationRequired(keepAlive: false, to: &clientOut)
        return closeAfterResponse(env)
    }
}
