// Shared set-up of the hook safety tests, split over two classes.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// A live-object baseline and a small calculator class to hook.
class HookSafetyTestCase: LiveObjectTestCase {
    func makeCalc(_ base: String, calls: Locked<Int> = Locked(0)) throws -> RuntimeClass {
        let cls = try makeClass(base)
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in
            calls.withLock { $0 += 1 }
            return a + b
        }
        try cls.addMethod("make") { (me: ObjectRef) -> Object? in try me.runtimeClass!.createInstance() }
        return cls
    }
}
