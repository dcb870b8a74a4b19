// expect: mutation of captured var 'forwarded' in concurrently-executing code
// A forwarding handler runs on the sender's thread.
import DynamicRuntime

func forwardAll(_ cls: RuntimeClass) throws {
    var forwarded = 0
    try cls.setForwardInvocation { _ in forwarded += 1 }
}
