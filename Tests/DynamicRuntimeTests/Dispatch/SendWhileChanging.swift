import Foundation
import Synchronization
@testable import DynamicRuntime

/// `senders` threads each call `send(thread, i)` for i in 0..<calls while one more thread
/// calls `change()` round after round — at least 20 rounds, and until every sender is done —
/// collecting retired items and pausing `pause` µs after each. An error `change` throws lands
/// in `bad` as "writer: …", the first ten that `send` throws as "send: …".
func sendWhileChanging(senders: Int = 8, calls: Int, pause: UInt32, bad: Locked<[String]>,
                       change: @escaping @Sendable () throws -> Void,
                       send: @escaping @Sendable (_ thread: Int, _ i: Int) throws -> Void) {
    let done = Atomic<Int>(0)
    runThreads(senders + 1) { thread in
        if thread == senders {
            var round = 0
            while done.load(ordering: .acquiring) < senders || round < 20 {
                do {
                    try change()
                } catch {
                    bad.withLock { $0.append("writer: \(error)") }
                }
                round += 1
                fwdCollect()
                usleep(pause)
            }
            return
        }
        for i in 0..<calls {
            do {
                try send(thread, i)
            } catch {
                bad.withLock { if $0.count < 10 { $0.append("send: \(error)") } }
            }
        }
        done.add(1, ordering: .acquiringAndReleasing)
    }
}
