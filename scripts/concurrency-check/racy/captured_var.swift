// expect: mutation of captured var 'total' in concurrently-executing code
// A body that adds into a local var it captured: every sender's thread writes it unlocked.
import DynamicRuntime

func install(on cls: RuntimeClass) throws {
    var total = 0
    try cls.addMethod("add:") { (_: ObjectRef, n: Int) -> Int in
        total += n
        return total
    }
}
