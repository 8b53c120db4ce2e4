import Foundation

extension String {
    /// How many times `text` occurs in this string, not overlapping: how often a log has a
    /// line (`event=…`), for a test that waits for the next one or checks there was one.
    public func occurrences(of text: String) -> Int {
        components(separatedBy: text).count - 1
    }
}
