import DomainMatch
import Passwords
import Policy
import Store
import SystemIO
import Zoneinfo

/// The parent's page and its JSON API (docs/parent-page.md): a request in, a response out.
/// It checks, in this order, before anything else runs: the client (403 unless
/// `web_allow_clients` lets it in), the `Host` (421 unless one of the
/// gateway's names or addresses, so a rebinding page cannot reach it), that a password is
/// set (503 until then), the session (401, or the login page), and for every change the
/// CSRF token and the `Origin` (403). A GET never changes anything.
///
/// Threading: used on the page's own loop thread only (the store's calls block it briefly;
/// no DNS or proxy loop waits on it).
public final class WebApp {
    let store: Store
    let household: any Household
    let password: WebPassword
    /// Lower-case host names and addresses a request's `Host` may name (with or without a port).
    let hosts: Set<String>
    let clock: any Clock
    let log: Logger
    /// Lease names and vendors for the Devices page.
    let deviceFacts: DeviceFacts
    /// `web_allow_clients`.
    let clients: PageClients
    /// The MAC address behind a client's address when the neighbour table knows it (on this
    /// loop's thread).
    let deviceMAC: (IPAddress) -> MACAddress?
    private var limiter = LoginLimiter()
    private let sessions: Sessions
    /// When each refused address was last logged: a device that keeps asking is said once a minute.
    private var refusalsLogged: [IPAddress: Int64] = [:]

    /// Bodies larger than this are refused with 413 before they are read.
    public static let maxBody = 16 * 1024

    public init(
        store: Store, household: any Household, password: WebPassword, hosts: Set<String>,
        clients: PageClients = .everyone, deviceMAC: @escaping (IPAddress) -> MACAddress? = { _ in nil },
        clock: any Clock, log: Logger, deviceFacts: DeviceFacts
    ) {
        self.clients = clients
        self.deviceMAC = deviceMAC
        self.store = store
        self.household = household
        self.password = password
        self.hosts = Set(hosts.map { $0.lowercased() })
        self.clock = clock
        self.log = log
        self.deviceFacts = deviceFacts
        sessions = Sessions(store: store)
    }

    var now: Int64 { clock.wall().unixSeconds }

    public func respond(_ request: WebRequest) -> WebResponse {
        guard clientAllowed(request.client) else {
            return .text(403, "This page is not open to this device.\n")
        }
        guard let host = request.header("Host"), hostAllowed(host) else {
            return .text(421, "This page answers only to the gateway's own names and addresses.\n")
        }
        let segments = request.segments
        if request.method == "GET", segments == ["static", "page.css"] {
            return WebResponse(status: 200, headers: [("Content-Type", "text/css")], body: Array(Stylesheet.text.utf8))
        }
        guard let (stored, tag) = password.current() else {
            return .text(
                503,
                "No password is set for this page yet. On the gateway, run: sudo phosra-gate web-password\n")
        }
        let isAPI = segments.first == "api"
        let changes = request.method != "GET" && request.method != "HEAD"
        if changes, !sameOrigin(request, host: host) {
            return refuse(403, "cross-origin request refused", api: isAPI)
        }
        if segments == ["api", "login"] || segments == ["login"] {
            if request.method == "GET", !isAPI { return Pages.login(message: nil) }
            guard request.method == "POST" else { return refuse(405, "use POST", api: isAPI) }
            return login(request, stored: stored, tag: tag, api: isAPI)
        }
        // Everything else needs a session.
        let session: Sessions.Session?
        do {
            session = try request.cookie(Sessions.cookieName).flatMap {
                try sessions.find(token: $0, passwordTag: tag, now: now)
            }
        } catch {
            log.error("web_store", [("error", "\(error)")])
            return refuse(500, "the gateway's store cannot be read", api: isAPI)
        }
        guard let session else {
            if isAPI || changes { return refuse(401, "log in first", api: isAPI) }
            return .redirect("/login")
        }
        if changes {
            let sent = request.header("X-CSRF-Token") ?? request.form["csrf_token"]
            guard let sent, Crypto.constantTimeEqual(Array(sent.utf8), Array(session.csrfToken.utf8)) else {
                return refuse(403, "missing or wrong CSRF token", api: isAPI)
            }
        }
        if segments == ["api", "logout"] || segments == ["logout"] {
            guard changes else { return refuse(405, "use POST", api: isAPI) }
            try? sessions.close(session, now: now)
            household.sessionsChanged()
            log.info("web_logout", [("client", "\(request.client)")])
            var response = isAPI ? WebResponse.json(200, "{}") : .redirect("/login")
            response.headers.append(("Set-Cookie", Sessions.expiredCookie))
            return response
        }
        do {
            if isAPI { return try api(request, segments: Array(segments.dropFirst())) }
            return try page(request, segments: segments, csrf: session.csrfToken)
        } catch let error as Refusal {
            return refuse(error.status, error.message, api: isAPI)
        } catch {
            log.error("web_store", [("error", "\(error)")])
            return refuse(500, "the gateway's store failed: \(error)", api: isAPI)
        }
    }

    /// A request the page refuses, with what is wrong.
    struct Refusal: Error {
        let status: Int
        let message: String

        init(_ status: Int, _ message: String) {
            self.status = status
            self.message = message
        }
    }

    func refuse(_ status: Int, _ message: String, api: Bool) -> WebResponse {
        if api { return .json(status, "{\"error\": \(Escape.json(message))}") }
        return Pages.message(status, message)
    }

    // MARK: - Login

    private func login(_ request: WebRequest, stored: StoredPassword, tag: String, api: Bool) -> WebResponse {
        let client = request.client.description
        let device = client
        // The log names the device as well when it is known by its MAC.
        let who = [("client", client)] + (deviceMAC(request.client).map { [("mac", "\($0)")] } ?? [])
        if let wait = limiter.retryAfter(device, now: now) {
            log.warn("web_login_locked", who + [("retry_after", "\(wait)")])
            var response = refuse(429, "too many wrong passwords from this device; try again later", api: api)
            response.headers.append(("Retry-After", "\(wait)"))
            return response
        }
        let given: String?
        if api {
            given = (try? JSONBody.decode(LoginBody.self, from: request.body))?.password
        } else {
            given = request.form["password"]
        }
        guard let given, !given.isEmpty, given.utf8.count <= 1024 else {
            return refuse(400, "no password given", api: api)
        }
        guard stored.matches(Array(given.utf8)) else {
            let lock = limiter.failed(device, now: now)
            log.warn("web_login_failed", who + (lock.map { [("locked_for", "\($0)")] } ?? []))
            if api { return .json(401, "{\"error\": \"wrong password\"}") }
            return Pages.login(message: "Wrong password.", status: 401)
        }
        limiter.succeeded(device)
        do {
            let opened = try sessions.open(address: client, passwordTag: tag, now: now)
            try store.pruneWebSessions(
                idleBefore: now - Sessions.idleSeconds, createdBefore: now - Sessions.maxAgeSeconds)
            log.info("web_login", who)
            household.sessionsChanged()
            var response =
                api ? WebResponse.json(200, "{\"csrf_token\": \(Escape.json(opened.csrf))}") : .redirect("/")
            response.headers.append(("Set-Cookie", Sessions.cookie(opened.token)))
            return response
        } catch {
            log.error("web_store", [("error", "\(error)")])
            return refuse(500, "cannot open a session: \(error)", api: api)
        }
    }

    struct LoginBody: Decodable { let password: String }

    // MARK: - Client, Host and Origin

    func clientAllowed(_ address: IPAddress) -> Bool {
        if clients.isEveryone { return true }
        let client = Client(address: address, mac: clients.needsMAC ? deviceMAC(address) : nil)
        let table = household.currentEngine().profiles
        let chosen: (Client) -> String? = { client in
            if case .fallback = table.reason(client) { return nil }
            return table.choose(client).name
        }
        if clients.allows(client, profile: chosen) { return true }
        if refusalsLogged.count > 1024 { refusalsLogged = [:] }
        if now - (refusalsLogged[address] ?? .min / 2) >= 60 {
            refusalsLogged[address] = now
            var fields = [("client", "\(address)")]
            if let mac = client.mac { fields.append(("mac", "\(mac)")) }
            log.warn("web_client_refused", fields + [("note", "not in web_allow_clients")])
        }
        return false
    }

    func hostAllowed(_ host: String) -> Bool { Self.hostMatches(host, hosts) }

    /// Whether `host` (a `Host` header: a name or address, with or without a port) is one of
    /// `hosts` (lower case).
    static func hostMatches(_ host: String, _ hosts: Set<String>) -> Bool {
        let lower = host.lowercased()
        if hosts.contains(lower) { return true }
        // `name:port` and `[v6]:port`: the part before the port.
        if lower.hasPrefix("["), let close = lower.firstIndex(of: "]") {
            return hosts.contains(String(lower[lower.index(after: lower.startIndex)..<close]))
        }
        if let colon = lower.lastIndex(of: ":"), lower.firstIndex(of: ":") == colon {
            return hosts.contains(String(lower[..<colon]))
        }
        return false
    }

    /// Whether a change comes from the page itself, as far as the browser says. `Origin`,
    /// when it names one, must be this page (the scheme it is served on and the same host).
    /// Under `Referrer-Policy: no-referrer` a browser sends `Origin: null` for the page's own
    /// form posts, so `Sec-Fetch-Site`, when sent, must then say `same-origin`. A client that
    /// sends neither (curl, an old browser) is left to the CSRF token, which only the page's
    /// session can know.
    func sameOrigin(_ request: WebRequest, host: String) -> Bool {
        if let site = request.header("Sec-Fetch-Site")?.lowercased(), site != "same-origin" { return false }
        guard let origin = request.header("Origin"), origin != "null" else { return true }
        return origin.lowercased() == "https://" + host.lowercased()
    }
}
