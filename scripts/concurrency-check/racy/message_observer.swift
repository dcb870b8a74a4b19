// expect: mutation of captured var 'seen' in concurrently-executing code
// An RxCocoa-style observer appending to a captured array.
import DynamicRuntime

func watch(_ cls: RuntimeClass) throws {
    var seen: [[DynamicValue]] = []
    try cls.onMessageSent("work") { _, arguments in seen.append(arguments) }
}
