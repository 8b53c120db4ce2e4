import DomainMatch

/// Built-in *background* names (docs/services.md#minutes-online): what a phone, a laptop or
/// a console asks for on its own, with nobody using it — push channels, time, captive-portal
/// and connectivity checks, system updates, certificate checks and the systems' own
/// telemetry. A name under one of these spends no minute online, and the daily limit never
/// blocks it, so push, time and updates keep working after the limit.
///
/// An entry covers itself and every name below it. Each family names the public page that
/// documents it. A name a person also uses in the foreground (a store's web pages, a
/// mail server, `www.google.com`) is never here: it would hide real use.
public enum BackgroundList {
    public struct Family: Sendable {
        public let name: String
        public let source: String
        public let names: [String]
    }

    public static let families: [Family] = [
        Family(
            name: "Apple: push, time, captive-portal check, updates, certificate checks",
            source: "https://support.apple.com/en-us/101555",
            names: [
                "push.apple.com", "time.apple.com", "time-ios.apple.com", "time-macos.apple.com",
                "captive.apple.com", "mesu.apple.com", "gdmf.apple.com", "swscan.apple.com", "swdist.apple.com",
                "swcdn.apple.com", "swdownload.apple.com", "updates.cdn-apple.com", "updates-http.cdn-apple.com",
                "xp.apple.com", "ocsp.apple.com", "ocsp2.apple.com", "valid.apple.com", "crl.apple.com",
                "certs.apple.com", "albert.apple.com", "humb.apple.com", "static.ips.apple.com", "tbsc.apple.com",
                "sq-device.apple.com",
            ]),
        Family(
            name: "Google and Android: Firebase Cloud Messaging (push)",
            source: "https://firebase.google.com/docs/cloud-messaging/concept-options",
            names: [
                "mtalk.google.com", "mtalk4.google.com", "alt1-mtalk.google.com", "alt2-mtalk.google.com",
                "alt3-mtalk.google.com", "alt4-mtalk.google.com", "alt5-mtalk.google.com", "alt6-mtalk.google.com",
                "alt7-mtalk.google.com", "alt8-mtalk.google.com", "android.googleapis.com",
                "fcm.googleapis.com", "firebaseinstallations.googleapis.com",
            ]),
        Family(
            name: "Android: connectivity check and network time (AOSP defaults)",
            source:
                "https://android.googlesource.com/platform/packages/modules/NetworkStack/+/refs/heads/main/res/values/config.xml",
            names: [
                "connectivitycheck.gstatic.com", "connectivitycheck.android.com", "time.android.com",
                "time.google.com",
            ]),
        Family(
            name: "Google: Chrome and Google software update checks",
            source: "https://support.google.com/chrome/a/answer/6350036",
            names: ["update.googleapis.com"]),
        Family(
            name: "Microsoft Windows: connectivity check (NCSI) and time",
            source:
                "https://learn.microsoft.com/en-us/troubleshoot/windows-client/networking/internet-explorer-edge-open-connect-corporate-public-network",
            names: ["msftconnecttest.com", "msftncsi.com", "time.windows.com"]),
        Family(
            name: "Microsoft Windows: push notifications (WNS)",
            source:
                "https://learn.microsoft.com/en-us/windows/apps/design/shell/tiles-and-notifications/firewall-allowlist-config",
            names: ["notify.windows.com", "wns.windows.com"]),
        Family(
            name: "Microsoft Windows and Xbox: updates and diagnostic data",
            source: "https://learn.microsoft.com/en-us/windows/privacy/manage-windows-11-endpoints",
            names: [
                "windowsupdate.com", "update.microsoft.com", "delivery.mp.microsoft.com",
                "settings-win.data.microsoft.com", "events.data.microsoft.com", "vortex.data.microsoft.com",
            ]),
        Family(
            name: "Amazon Fire and Kindle: push (Amazon Device Messaging), time, updates, connectivity check",
            source:
                "https://github.com/Perflyst/PiHoleBlocklist/blob/master/AmazonFireTV.txt (observed, not Amazon's own)",
            names: [
                "device-messaging-na.amazon.com", "devicemessaging.us-east-1.amazon.com", "ntp-fireos.com",
                "softwareupdates.amazon.com", "spectrum.s3.amazonaws.com",
            ]),
        Family(
            name: "Firefox: captive-portal check",
            source: "https://support.mozilla.org/kb/captive-portal",
            names: ["detectportal.firefox.com"]),
        Family(
            name: "Nintendo Switch: connection test and system update check",
            source: "https://switchbrew.org/wiki/Network",
            names: ["ctest.cdn.nintendo.net", "ctest.p01.ctest.srv.nintendo.net", "sun.hac.lp1.d4c.nintendo.net"]),
        Family(
            name: "Network time (NTP pools)",
            source: "https://www.ntppool.org/en/use.html",
            names: ["pool.ntp.org"]),
    ]

    public static let names: [String] = families.flatMap(\.names)

    public static let entries: [DomainName] = names.map { try! QueryName.parse($0) }
}
