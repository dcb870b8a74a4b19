// Shared set-up of the hook behaviour tests, split by topic over two classes.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// A live-object baseline and a calculator class to hook.
class HookBehaviourTestCase: LiveObjectTestCase {
    /// A class with `add:to:` (counting its calls) and a few other shapes.
    func makeCalc(_ base: String = "HookCalc", calls: Locked<Int> = Locked(0)) throws -> RuntimeClass {
        let cls = try makeClass(base, ivars: [("tag", .int64)])
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in
            calls.withLock { $0 += 1 }
            return a + b
        }
        try cls.addMethod("scale:") { (_: ObjectRef, x: Double) in x * 2 }
        try cls.addMethod("frame") { (_: ObjectRef) in FwdRect(origin: Point(x: 1, y: 2), size: FwdSize(width: 3, height: 4)) }
        try cls.addMethod("make") { (me: ObjectRef) -> Object? in try me.runtimeClass!.createInstance() }
        try cls.addMethod("tag") { (me: ObjectRef) -> Int in try me.value(ofIvar: "tag", as: Int.self) }
        return cls
    }

    func imp(_ cls: RuntimeClass, _ sel: Selector) -> IMP? { cls.ownMethod(for: sel)?.implementation }
}
