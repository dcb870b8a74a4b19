// expect: main actor-isolated var 'count' can not be mutated from a nonisolated context
// A method body in main.swift that counts into a top-level var: senders on 4 threads would lose
// updates, and the body would trap when a rule runs it on the engine's queue.
import DynamicRuntime

let cls = try RuntimeClass(name: "Counter")
var count = 0
try cls.addMethod("increment") { (_: ObjectRef) in count += 1 }
