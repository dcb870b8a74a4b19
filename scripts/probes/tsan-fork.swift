// Forks children of a process whose other threads read a lazily initialised global, with
// nothing of this package involved: under ThreadSanitizer most children hang in the Swift
// runtime's `swift_once`; a plain build's never do (docs/reliability.md, "fork").
//
//   swiftc -Onone -sanitize=thread scripts/probes/tsan-fork.swift -o /tmp/tsan-fork && /tmp/tsan-fork 40
//   swiftc -Onone scripts/probes/tsan-fork.swift -o /tmp/plain-fork && /tmp/plain-fork 40
import Glibc
import Synchronization

final class Table: Sendable {
    static let shared = Table()
    let base = 7
}

let stop = Atomic<Bool>(false)
let workers = Atomic<Int>(0)
var threads: [pthread_t] = []
for _ in 0..<4 {
    var t = pthread_t()
    pthread_create(&t, nil, { _ in
        var n = 0
        while !stop.load(ordering: .relaxed) {
            var d: [Int: Int] = [:]
            d[n + Table.shared.base] = n
            n &+= d.count
        }
        workers.add(1, ordering: .relaxed)
        return nil
    }, nil)
    threads.append(t)
}
_ = Table.shared
usleep(100_000)
let forks = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 8 : 8
var exited = 0
for _ in 0..<forks {
    let pid = fork()
    if pid == 0 {
        var d: [Int: Int] = [:]
        d[Table.shared.base] = 1
        _exit(d.count == 1 ? 0 : 1)
    }
    var status: Int32 = 0
    var reaped = false
    for _ in 0..<300 where !reaped {
        reaped = waitpid(pid, &status, WNOHANG) == pid
        if !reaped { usleep(10_000) }
    }
    if reaped && status == 0 { exited += 1 } else { kill(pid, SIGKILL); waitpid(pid, &status, 0) }
}
stop.store(true, ordering: .relaxed)
for t in threads { pthread_join(t, nil) }
print("\(exited) of \(forks) children exited; \(forks - exited) hung (killed after 3 s)")
