/// A network interface name as `lan_interfaces` gives it (`br-lan`, `eth1`, `wlan0`), or a
/// prefix ending in `*` (`wlan*`), which nftables matches against every interface that
/// starts with it. Limited to what the kernel accepts (at most 15 bytes) and to characters
/// that need no escaping inside an nftables string, so the name is written as it is.
public struct InterfaceName: Hashable, Sendable, CustomStringConvertible {
    public let text: String

    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        // IFNAMSIZ is 16 with the terminating NUL.
        guard !bytes.isEmpty, bytes.count <= 15 else { return nil }
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "@"):
                continue
            case UInt8(ascii: "*") where index == bytes.count - 1 && index > 0:
                continue
            default:
                return nil
            }
        }
        self.text = text
    }

    public var description: String { text }
}
