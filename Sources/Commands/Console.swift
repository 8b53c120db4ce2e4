import Gateway
import Glibc

/// Where commands write: stdout for results, stderr for one-line errors and warnings.
/// A protocol so tests can capture output without a process.
protocol Console {
    func out(_ line: String)
    func err(_ line: String)
}

/// Unbuffered line writes to file descriptors 1 and 2 (a line is one `write`, so lines
/// from both streams keep their order).
struct StandardConsole: Console {
    func out(_ line: String) { write(1, line + "\n") }
    func err(_ line: String) { write(2, line + "\n") }

    private func write(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}
