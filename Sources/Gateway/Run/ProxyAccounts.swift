import Config
import Passwords
import ProxyCore

/// The profiles' proxy users (docs/proxy.md#proxy-authentication): each `proxy_user` with
/// its `proxy_password`, read when the configuration is, so a bad hash is an error naming
/// file, line and key.
package enum ProxyAccounts {
    /// The logins, nil when no profile has a proxy user; `plain` names the profiles whose
    /// password is written in clear (accepted, with a warning: a hash from
    /// `phosra-gate passwd` keeps it off the disk).
    static func logins(_ settings: Settings) throws(GatewayError) -> (logins: ProxyLogins?, plain: [String]) {
        var stored: [String: StoredPassword] = [:]
        var plain: [String] = []
        for (name, table) in settings.profiles {
            let user = table[Key.proxyUser]
            guard !user.isEmpty else { continue }
            let origin = table.origin(Key.proxyPassword) ?? table.origin(Key.proxyUser) ?? .flag("--proxy-user")
            let text = table[Key.proxyPassword]
            guard !text.isEmpty else {
                throw .config(
                    ConfigError(
                        origin, key: Key.proxyPassword.name, "profile \(name) has a proxy_user but no proxy_password"))
            }
            do {
                let password = try StoredPassword(text)
                if password.isPlain { plain.append(name) }
                stored[user] = password
            } catch {
                throw .config(ConfigError(origin, key: Key.proxyPassword.name, "\(error)"))
            }
        }
        guard !stored.isEmpty else { return (nil, plain) }
        let verifier = PasswordVerifier()
        let accounts = stored
        let logins = ProxyLogins(
            remembered: { user, password in
                guard let expected = accounts[user] else { return false }
                return verifier.isRemembered(user: user, password: password, against: expected)
            },
            check: { user, password in
                guard let expected = accounts[user] else { return false }
                return verifier.verify(user: user, password: password, against: expected)
            })
        return (logins, plain)
    }
}
