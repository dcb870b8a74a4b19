// The sound counterpart: state shared with method bodies is Sendable (an atomic, a semaphore),
// sends come from 4 threads, and a body written here in main.swift runs on the engine's queue
// (a debounce rule) without tripping main-actor isolation.
import Dispatch
import DynamicRuntime
import MessageThrottle
import Synchronization

let total = Atomic<Int>(0)
let cls = try RuntimeClass(name: "SoundCounter")
try cls.addMethod("add:") { (_: ObjectRef, n: Int) -> Int in total.add(n, ordering: .relaxed).newValue }
let fired = DispatchSemaphore(value: 0)
try cls.addMethod("settle") { (_: ObjectRef) in fired.signal() }

let counter = try cls.createInstance()
DispatchQueue.concurrentPerform(iterations: 4) { _ in
    for _ in 0..<1_000 { _ = try! counter.send("add:", 1) as Int }
}
guard total.load(ordering: .relaxed) == 4_000 else { fatalError("lost updates: \(total.load(ordering: .relaxed))") }

let engine = Engine(executor: DispatchQueueExecutor())
try counter.limit("settle", oncePer: .milliseconds(5), mode: .debounce, in: engine)
try counter.send("settle", as: Void.self)
guard fired.wait(timeout: .now() + 10) == .success else { fatalError("the debounced body never ran") }
print("sound: 4000 updates kept; the debounced body ran on the engine's queue")
