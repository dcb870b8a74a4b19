import DynamicRuntime
import Dispatch
import Foundation

/// Sends `add:to:` (i, thread) 300 times on each of 8 threads, each thread to one of
/// `receivers` in turn, while a writer thread calls `change` with 1, 2, 3 … until they are
/// done. A method the writer installs may add 1000 to the sum. Returns what went wrong:
/// wrong sums and errors, one line each.
package func sendAddsWhileChanging(_ receivers: [ObjectRef], _ change: @escaping @Sendable (Int) -> Void) -> [String] {
    let sel = Selector("add:to:")
    let stop = Locked(false)
    let bad = Locked<[String]>([])
    let writer = Thread {
        var i = 0
        while !stop.current {
            i += 1
            change(i)
        }
    }
    writer.start()
    DispatchQueue.concurrentPerform(iterations: 8) { t in
        let ref = receivers[t % receivers.count]
        for i in 0..<300 {
            do {
                let r: Int = try ref.send(sel, i, t)
                if r != i + t, r != i + t + 1000 { bad.append("thread \(t): \(r) for \(i) + \(t)") }
            } catch {
                bad.append("thread \(t): \(error)")
            }
        }
    }
    stop.set(true)
    while !writer.isFinished { usleep(1000) }
    return bad.take()
}
