import DomainMatch
import Policy
import ProxyCore
import Store
import SystemIO
import Zoneinfo

/// The child's side of the page (docs/requests-and-notifications.md#the-childs-page): for
/// the device that asks, and only for it, what its profile allows now, when that changes,
/// the minutes left, its last blocks in plain words and its requests with their answers;
/// and the one thing it can do, ask. No login and no parent control: the device is known by
/// its address (and MAC), as for its DNS queries.
///
/// It checks the `Host` (the home name or one of the gateway's addresses: a page on the
/// web cannot read it through a rebinding name) and, for an ask, that it comes from this
/// page (`Origin`, `Sec-Fetch-Site`). Every value from outside is written escaped.
///
/// Threading: on the page's loop thread only, like `WebApp`.
public final class ChildApp {
    let store: Store
    let household: any Household
    /// Lower-case names and addresses a request's `Host` may name.
    let hosts: Set<String>
    let clock: any Clock
    let log: Logger
    let deviceMAC: (IPAddress) -> MACAddress?
    /// The gateway's own addresses, from which the proxy brings a device's request with
    /// who asks (`ProxyCore.ChildIdentity`); from anywhere else those fields are ignored.
    let gateway: Set<IPAddress>

    public init(
        store: Store, household: any Household, hosts: Set<String>, gateway: Set<IPAddress> = [],
        deviceMAC: @escaping (IPAddress) -> MACAddress? = { _ in nil }, clock: any Clock, log: Logger
    ) {
        self.store = store
        self.household = household
        self.gateway = gateway
        self.hosts = Set(hosts.map { $0.lowercased() })
        self.deviceMAC = deviceMAC
        self.clock = clock
        self.log = log
    }

    var now: Int64 { clock.wall().unixSeconds }

    /// A note has at most this many characters.
    public static let maxNote = 200

    public func respond(_ request: WebRequest) -> WebResponse {
        guard let host = request.header("Host"), WebApp.hostMatches(host, hosts) else {
            return .text(421, "This page answers only to the gateway's own names and addresses.\n")
        }
        let segments = request.segments
        if request.method == "GET", segments == ["static", "page.css"] {
            return WebResponse(status: 200, headers: [("Content-Type", "text/css")], body: Array(Stylesheet.text.utf8))
        }
        let device = proxied(request) ?? Device(request.client, mac: deviceMAC(request.client))
        do {
            switch (request.method, segments) {
            case ("GET", []), ("HEAD", []), ("GET", ["ask"]), ("HEAD", ["ask"]):
                return .html(200, try page(device, asking: request.query, notice: nil))
            case ("POST", ["ask"]):
                guard sameOrigin(request, host: host) else { return .text(403, "cross-origin request refused\n") }
                return try ask(device, form: request.form)
            case (_, []), (_, ["ask"]):
                return .text(405, "use GET, or POST to ask\n")
            default:
                return .html(404, Pages.document(title: "Not here", body: "<p><a href=\"/\">Back</a></p>"))
            }
        } catch {
            log.error("child_page_store", [("error", "\(error)")])
            return .text(500, "the gateway's store failed\n")
        }
    }

    /// The device that asks: its address, its MAC when the neighbour table knows it, and the
    /// key its requests are kept under (the MAC, else the address); through the proxy, the
    /// profile the proxy chose for it (a proxy user's).
    struct Device {
        let address: IPAddress
        let mac: MACAddress?
        var profileName: String? = nil
        var key: String { mac?.description ?? address.description }

        init(_ address: IPAddress, mac: MACAddress?, profileName: String? = nil) {
            self.address = address
            self.mac = mac
            self.profileName = profileName
        }
    }

    /// Who asks through the proxy: believed from the gateway's own addresses only.
    func proxied(_ request: WebRequest) -> Device? {
        guard gateway.contains(request.client),
            let address = request.header(ChildIdentity.addressField).flatMap({ IPAddress($0) }),
            let profile = request.header(ChildIdentity.profileField)
        else { return nil }
        return Device(
            address, mac: request.header(ChildIdentity.macField).flatMap { MACAddress($0) }, profileName: profile)
    }

    func profile(of device: Device) -> Profile {
        let profiles = household.currentEngine().profiles
        if let name = device.profileName, let named = profiles.profiles.first(where: { $0.name == name }) {
            return named
        }
        return profiles.choose(Client(address: device.address, mac: device.mac))
    }

    // MARK: - Asking

    /// What a device may ask for: a form's `kind` and its `target`.
    enum Ask {
        case time
        case app(String)
        case site(DomainName)

        var kind: String {
            switch self {
            case .time: "time"
            case .app: "app"
            case .site: "site"
            }
        }

        var target: String? {
            switch self {
            case .time: nil
            case .app(let id): id
            case .site(let name): name.description
            }
        }
    }

    func ask(_ device: Device, form: [String: String]) throws -> WebResponse {
        let profile = profile(of: device)
        let engine = household.currentEngine()
        guard profile.rules.filtered else {
            return .html(400, try page(device, asking: [:], notice: "This device is not filtered: nothing to ask."))
        }
        let wanted: Ask
        switch form["kind"] {
        case "time": wanted = .time
        case "app":
            guard let id = form["app"], let index = engine.services.service(named: id),
                profile.rules.dailyMinutes(for: engine.services.services[index]) != nil
            else {
                return .html(400, try page(device, asking: form, notice: "That app has no daily time to add to."))
            }
            wanted = .app(engine.services.services[index].id)
        case "site":
            let text = String((form["name"] ?? "").filter { $0 != " " }).lowercased()
            guard let name = try? QueryName.parse(text), name.labelCount >= 2 else {
                return .html(400, try page(device, asking: form, notice: "That is not a site's name."))
            }
            wanted = .site(name)
        default:
            return .html(400, try page(device, asking: form, notice: "Say what to ask for."))
        }
        let note = form["note"] ?? ""
        guard note.count <= Self.maxNote else {
            return .html(
                400, try page(device, asking: form, notice: "A note has at most \(Self.maxNote) characters."))
        }
        let row = RequestRow(
            profile: profile.name, device: device.key, address: device.address.description, kind: wanted.kind,
            target: wanted.target, note: note, askedAt: now,
            expiresAt: Times.nextMidnight(after: now, zone: engine.zone))
        switch try store.addRequest(row) {
        case .success(let stored):
            log.info(
                "request_asked",
                [
                    ("id", "\(stored.id)"), ("profile", profile.name), ("device", device.key), ("kind", wanted.kind),
                ] + (wanted.target.map { [("target", $0)] } ?? []))
            var words = Self.words(stored)
            if stored.kind == "app", let id = stored.target,
                let service = engine.services.services.first(where: { $0.id == id })
            {
                words = "More time on \(service.name)"
            }
            household.requestAsked(stored, words: words)
            return .redirect("/")
        case .failure(.tooManyWaiting(let waiting)):
            return .html(
                429,
                try page(
                    device, asking: form,
                    notice: "You have \(waiting) questions waiting for an answer already. Wait for one first."))
        case .failure(.tooSoon(let retryAt)):
            var response = WebResponse.html(
                429, try page(device, asking: form, notice: "You asked a moment ago. Ask again in a minute."))
            response.headers.append(("Retry-After", "\(max(retryAt - now, 1))"))
            return response
        }
    }

    /// Whether an ask comes from this page, as far as the browser says (see `WebApp.sameOrigin`;
    /// this page is plain HTTP).
    func sameOrigin(_ request: WebRequest, host: String) -> Bool {
        if let site = request.header("Sec-Fetch-Site")?.lowercased(), site != "same-origin" { return false }
        guard let origin = request.header("Origin"), origin != "null" else { return true }
        return origin.lowercased() == "http://" + host.lowercased()
    }
}
