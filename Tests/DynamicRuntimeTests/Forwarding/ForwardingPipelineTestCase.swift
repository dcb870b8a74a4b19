// Every stage of the forwarding path, in Objective-C's order.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// Shared set-up of the forwarding-path tests (one class per group of stages): a live-object
/// baseline and a target class.
class ForwardingPipelineTestCase: LiveObjectTestCase {
    /// A class whose instances answer `add:to:`, `scale:` (double), `payload` (object) and
    /// `frame` (a 32-byte struct), recording the receiver they ran on.
    func makeTarget(_ base: String = "FwdTarget", receivers: Locked<[sf_id?]>? = nil) throws -> RuntimeClass {
        nonisolated(unsafe) let receivers = receivers
        let cls = try makeClass(base, ivars: [("payload", .object)])
        try cls.addMethod("add:to:") { (me: ObjectRef, a: Int, b: Int) -> Int in
            receivers?.withLock { $0.append(me.raw) }
            return a + b
        }
        try cls.addMethod("mul:by:") { (_: ObjectRef, a: Int, b: Int) in a * b }
        try cls.addMethod("scale:") { (_: ObjectRef, x: Double) in x * 2.5 }
        try cls.addMethod("payload") { (me: ObjectRef) -> Object? in try me.value(ofIvar: "payload", as: Object?.self) }
        try cls.addMethod("frame:") { (_: ObjectRef, p: Point) in
            FwdRect(origin: p, size: FwdSize(width: 10, height: 20))
        }
        try cls.addMethod("ratio") { (_: ObjectRef) -> Float in 0.75 }
        return cls
    }
}

/// Argument storage for sf_msg_send: one heap slot per argument.
final class FwdCArgs {
    var ptrs: [UnsafeMutableRawPointer?] = []

    func add<T: BitwiseCopyable>(_ value: T) {
        let p = UnsafeMutableRawPointer.allocate(byteCount: max(MemoryLayout<T>.size, 16), alignment: 16)
        p.initializeMemory(as: UInt8.self, repeating: 0, count: max(MemoryLayout<T>.size, 16))
        p.storeBytes(of: value, as: T.self)
        ptrs.append(p)
    }

    func send(_ obj: sf_id?, _ sel: Selector, _ ret: UnsafeMutableRawPointer?) -> sf_status {
        ptrs.withUnsafeMutableBufferPointer { sf_msg_send(obj, sel.raw, ret, $0.baseAddress) }
    }

    deinit { for p in ptrs { p?.deallocate() } }
}
