import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// The C API writes exactly the return type's size into a caller's buffer: `int ret;
/// sf_msg_send(obj, sel, &ret, args)` must not touch the bytes after `ret` (libffi itself
/// writes a whole word for a small integer). Each buffer is followed by a guard word.
final class ReturnBufferSizeTests: XCTestCase {
    private struct Guarded<T> {
        var value: T
        var guardWord: UInt32 = 0xDEAD_BEEF
    }

    private func check<T: Equatable>(_ obj: Object, _ selector: String, _ expected: T, _ zero: T,
                                     file: StaticString = #filePath, line: UInt = #line) throws {
        let sel = Selector(selector)
        var sent = Guarded(value: zero)
        XCTAssertEqual(withUnsafeMutablePointer(to: &sent.value) { sf_msg_send(obj.raw, sel.raw, $0, nil) }, SF_OK,
                       file: file, line: line)
        XCTAssertEqual(sent.value, expected, "sf_msg_send \(selector)", file: file, line: line)
        XCTAssertEqual(sent.guardWord, 0xDEAD_BEEF, "sf_msg_send \(selector) wrote past its buffer", file: file, line: line)
        let cls = try XCTUnwrap(sf_object_getClass(obj.raw))
        let m = try XCTUnwrap(sf_class_getInstanceMethod(cls, sel.raw))
        var invoked = Guarded(value: zero)
        XCTAssertEqual(withUnsafeMutablePointer(to: &invoked.value) { sf_method_invoke(m, obj.raw, $0, nil) }, SF_OK,
                       file: file, line: line)
        XCTAssertEqual(invoked.value, expected, "sf_method_invoke \(selector)", file: file, line: line)
        XCTAssertEqual(invoked.guardWord, 0xDEAD_BEEF, "sf_method_invoke \(selector) wrote past its buffer", file: file, line: line)
    }

    func testSmallReturnsFillExactlyTheirSize() throws {
        let cls = try RuntimeClass(name: "ReturnSize.Small")
        try cls.addMethod("int") { (_: ObjectRef) -> Int32 in -7 }
        try cls.addMethod("uint") { (_: ObjectRef) -> UInt32 in 0xFFFF_FFF0 }
        try cls.addMethod("short") { (_: ObjectRef) -> Int16 in -300 }
        try cls.addMethod("char") { (_: ObjectRef) -> Int8 in -5 }
        try cls.addMethod("uchar") { (_: ObjectRef) -> UInt8 in 200 }
        try cls.addMethod("bool") { (_: ObjectRef) -> Bool in true }
        try cls.addMethod("float") { (_: ObjectRef) -> Float in 1.5 }
        let o = try cls.createInstance()
        try check(o, "int", Int32(-7), 0)
        try check(o, "uint", UInt32(0xFFFF_FFF0), 0)
        try check(o, "short", Int16(-300), 0)
        try check(o, "char", Int8(-5), 0)
        try check(o, "uchar", UInt8(200), 0)
        try check(o, "bool", true, false)
        try check(o, "float", Float(1.5), 0)
    }

    /// A forwarded send fills the caller's buffer as a direct one does.
    func testForwardedSendsFillExactlyTheirSize() throws {
        let real = try RuntimeClass(name: "ReturnSize.Real")
        try real.addMethod("int") { (_: ObjectRef) -> Int32 in -7 }
        try real.addMethod("short") { (_: ObjectRef) -> Int16 in -300 }
        let target = try real.createInstance()
        let byTarget = try RuntimeClass(name: "ReturnSize.ByTarget")
        try byTarget.setForwardingTarget { _, _ in target.ref }
        let byInvocation = try RuntimeClass(name: "ReturnSize.ByInvocation")
        try byInvocation.setMethodSignature { _, sel in try Signature(sel.name == "int" ? "i@:" : "s@:") }
        try byInvocation.setForwardInvocation { invocation in try invocation.invoke(target: target.ref) }
        for cls in [byTarget, byInvocation] {
            let o = try cls.createInstance()
            for (selector, expected) in [("int", -7), ("short", -300)] {
                var buffer = Guarded(value: Int32(0))
                if selector == "short" { buffer.value = 0x1111_0000 }
                XCTAssertEqual(withUnsafeMutablePointer(to: &buffer.value) { sf_msg_send(o.raw, Selector(selector).raw, $0, nil) }, SF_OK)
                XCTAssertEqual(buffer.guardWord, 0xDEAD_BEEF, "\(cls.name) \(selector) wrote past its buffer")
                if selector == "int" {
                    XCTAssertEqual(buffer.value, Int32(expected), "\(cls.name)")
                } else {
                    XCTAssertEqual(Int16(truncatingIfNeeded: buffer.value), Int16(expected), "\(cls.name)")
                    XCTAssertEqual(UInt32(bitPattern: buffer.value) >> 16, 0x1111, "\(cls.name): a short fills two bytes")
                }
            }
        }
    }
}
