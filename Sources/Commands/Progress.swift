import Gateway
import Glibc

/// A one-line progress indicator on stderr, shown only when stderr is a terminal and the
/// input is large enough to be worth watching.
struct Progress {
    private let total: Int64
    private let label: String
    private let visible: Bool
    private var shownPercent = -1

    init(total: Int64, label: String, minimum: Int64 = 8 << 20) {
        self.total = total
        self.label = label
        visible = total >= minimum && isatty(2) != 0
    }

    mutating func update(_ done: Int64) {
        guard visible, total > 0 else { return }
        let percent = Int(done * 100 / total)
        guard percent != shownPercent else { return }
        shownPercent = percent
        let line = "\r\(label) \(percent)% (\(done >> 20) of \(total >> 20) MiB)"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }

    func finish() {
        guard visible, shownPercent >= 0 else { return }
        _ = "\r\u{1B}[K".withCString { write(2, $0, strlen($0)) }
    }
}
