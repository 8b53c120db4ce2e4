import Gateway
import SystemIO

/// Minimal JSON writing for one-object-per-line output, keys in a fixed order.
enum JSONText {
    static func string(_ text: String?) -> String {
        text.map(Logger.json) ?? "null"
    }

    /// `{"k":v,...}` from already-encoded values, in the order given.
    static func object(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { "\(string($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }
}
