import Foundation

/// The threads of a process as Linux shows them under /proc/PID/task: each one's name
/// (`comm`) and the fields of its `stat` line, for tests that check what the kernel sees
/// of a thread (asleep in epoll_wait, its scheduling class) rather than what the code says.
public struct ProcessThread: Sendable {
    public let name: String
    /// `stat`'s fields from field 3 (the state) on: the name, field 2, is in parentheses
    /// and may hold spaces, so it is cut off first.
    let fields: [Substring]

    /// Field `number` of proc(5)'s numbering (3 the state, 41 the scheduling policy).
    public func field(_ number: Int) -> Substring? {
        fields.indices.contains(number - 3) ? fields[number - 3] : nil
    }

    /// The state letter (R, S, D, …).
    public var state: Substring? { field(3) }
    /// The scheduling policy: 0 SCHED_OTHER, 5 SCHED_IDLE.
    public var policy: Int? { field(41).flatMap { Int($0) } }

    /// The threads of `pid` (nil: this process); a thread that ends while they are read is
    /// left out.
    public static func all(of pid: Int32? = nil) -> [ProcessThread] {
        let directory = "/proc/\(pid.map(String.init) ?? "self")/task"
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return tasks.compactMap { task in
            guard let name = try? String(contentsOfFile: "\(directory)/\(task)/comm", encoding: .utf8),
                let stat = try? String(contentsOfFile: "\(directory)/\(task)/stat", encoding: .utf8),
                let close = stat.range(of: ") ", options: .backwards)
            else { return nil }
            return ProcessThread(
                name: name.trimmingCharacters(in: .whitespacesAndNewlines),
                fields: stat[close.upperBound...].split(separator: " "))
        }
    }
}
