import CInteropFixtures
import CDynamicRuntime
import Synchronization
import XCTest
@testable import DynamicRuntime

/// Every C fixture class gets its own name: the registry is process-wide.
private let counter = Atomic<Int>(0)
private func fixtureName(_ base: String = #function) -> String {
    "\(base.filter { $0.isLetter })_C\(counter.add(1, ordering: .relaxed).newValue)"
}

private func imp<F>(_ f: F) -> IMP { IMP(unsafeBitCast(f, to: sf_imp.self)) }

/// Swift mirrors of the fixtures' C structs. StructMessageValue needs BitwiseCopyable, which an
/// imported C struct cannot be given outside its own module; the layouts are identical.
struct FxPoint: StructMessageValue, Equatable {
    var x, y: Double
    static var typeEncoding: TypeEncoding { .structure(name: "fx_point", fields: [.double, .double]) }
}

struct FxQuad: StructMessageValue, Equatable {
    var a, b, c, d: Int64
    static var typeEncoding: TypeEncoding { .structure(name: "fx_quad", fields: [.int64, .int64, .int64, .int64]) }
}

struct FxMixed: StructMessageValue {
    var c: Int8
    var i: Int32
    var d: Double
    static var typeEncoding: TypeEncoding { .structure(name: "fx_mixed", fields: [.int8, .int32, .double]) }
}

/// C code written against SelectorForwarding.h alone: it builds classes, adds C-function
/// methods, allocates objects, looks up and calls IMPs, retains and releases, uses weak refs
/// and associated objects, and reports errors. Each scenario returns 0 or the failing line.
final class CInteropScenarioTests: XCTestCase {
    private func run(_ scenario: (UnsafePointer<CChar>) -> Int32, file: StaticString = #filePath, line: UInt = #line) {
        let objects = Runtime.liveObjectCount
        let result = fixtureName().withCString { scenario($0) }
        XCTAssertEqual(result, 0, String(cString: fx_failure()), file: file, line: line)
        XCTAssertEqual(Runtime.liveObjectCount, objects, "the scenario released everything it made", file: file, line: line)
    }

    func testClassPairs() { run(fx_scenario_class_pair) }
    func testMethodsAndLookup() { run(fx_scenario_methods_and_lookup) }
    func testReplaceAndExchange() { run(fx_scenario_replace_exchange) }
    func testMessageSend() { run(fx_scenario_msg_send) }
    func testMissingMethods() { run(fx_scenario_missing_methods) }
    func testBadInputs() { run(fx_scenario_bad_inputs) }
    func testObjectsAndDeallocObservers() { run(fx_scenario_objects) }
    func testWeakReferencesAndAssociatedObjects() { run(fx_scenario_weak_and_associated) }
    func testIvars() { run(fx_scenario_ivars) }
    func testClassMethods() { run(fx_scenario_class_methods) }
    func testManyObjectsFromC() { run { fx_scenario_many_objects($0, 20_000) } }
}

/// Swift and C working on the same classes and objects.
final class CInteropMixedTests: XCTestCase {
    private var cls: RuntimeClass!
    private var obj: Object!

    override func setUpWithError() throws {
        cls = try RuntimeClass(name: fixtureName(name))
        obj = try cls.createInstance()
    }

    override func tearDown() {
        obj = nil
        cls = nil
    }

    func testCCallsSwiftClosureMethods() throws {
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        XCTAssertEqual(fx_call_long2(obj.raw, "add:to:", 40, 2, -1), 42)
        var out = 0
        XCTAssertEqual(fx_send_long2(obj.raw, "add:to:", 5, 6, &out), SF_OK)
        XCTAssertEqual(out, 11)
        try cls.replaceMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a * b }
        XCTAssertEqual(fx_call_long2(obj.raw, "add:to:", 6, 7, -1), 42, "C sees the replacement")
    }

    func testSwiftSendsToCFunctionMethods() throws {
        try cls.addMethod("add:to:", implementation: imp(fx_add as @convention(c) (sf_id?, sf_sel?, Int, Int) -> Int), types: "q@:qq")
        try cls.addMethod("scale:by:", implementation: imp(fx_scale as @convention(c) (sf_id?, sf_sel?, Double, Double) -> Double), types: "d@:dd")
        try cls.addMethod("half:", implementation: imp(fx_half_float as @convention(c) (sf_id?, sf_sel?, Float) -> Float), types: "f@:f")
        try cls.addMethod("negate:", implementation: imp(fx_negate_char as @convention(c) (sf_id?, sf_sel?, Int8) -> Int8), types: "c@:c")
        try cls.addMethod("widen:", implementation: imp(fx_widen_char as @convention(c) (sf_id?, sf_sel?, Int8) -> Int), types: "q@:c")
        try cls.addMethod("ushortMax", implementation: imp(fx_ushort_max as @convention(c) (sf_id?, sf_sel?) -> UInt16), types: "S@:")
        try cls.addMethod("isPositive:", implementation: imp(fx_is_positive as @convention(c) (sf_id?, sf_sel?, Double) -> Bool), types: "B@:d")
        try cls.addMethod("sum:::::", implementation: imp(fx_sum6 as @convention(c) (sf_id?, sf_sel?, Int, Int, Int, Int, Int, Int) -> Int), types: "q@:qqqqqq")
        try cls.addMethod("className", implementation: imp(fx_class_name_of as @convention(c) (sf_id?, sf_sel?) -> UnsafePointer<CChar>?), types: "*@:")
        try cls.addMethod("cmd", implementation: imp(fx_return_cmd as @convention(c) (sf_id?, sf_sel?) -> sf_sel?), types: ":@:")
        try cls.addMethod("classOf:", implementation: imp(fx_class_of as @convention(c) (sf_id?, sf_sel?, sf_id?) -> sf_class_t?), types: "#@:@")
        try cls.addMethod("me", implementation: imp(fx_return_self as @convention(c) (sf_id?, sf_sel?) -> sf_id?), types: "@@:")

        XCTAssertEqual(try obj.send("add:to:", 40, 2) as Int, 42)
        XCTAssertEqual(try obj.send("add:to:", 40, 2).intValue, 42)
        XCTAssertEqual(try obj.send("scale:by:", 1.5, 4.0) as Double, 6)
        XCTAssertEqual(try obj.send("scale:by:", 1.5, 4.0).doubleValue, 6)
        XCTAssertEqual(try obj.send("half:", Float(3)) as Float, 1.5)
        XCTAssertEqual(try obj.send("half:", Float(3)).doubleValue, 1.5)
        for v: Int8 in [-128, -1, 0, 1, 127] {
            XCTAssertEqual(try obj.send("negate:", v) as Int8, 0 &- v)
            XCTAssertEqual(try obj.send("negate:", v).intValue, Int(0 &- v))
            XCTAssertEqual(try obj.send("widen:", v) as Int, Int(v), "the C callee sees a sign-extended char")
            XCTAssertEqual(try obj.send("widen:", v).intValue, Int(v))
        }
        XCTAssertEqual(try obj.send("ushortMax") as UInt16, .max)
        XCTAssertEqual(try obj.send("ushortMax").intValue, 65535)
        XCTAssertEqual(try obj.send("isPositive:", 2.0) as Bool, true)
        XCTAssertEqual(try obj.send("isPositive:", -2.0) as Bool, false)
        if case .bool(false) = try obj.send("isPositive:", -2.0) {} else { XCTFail("dynamic Bool") }
        XCTAssertEqual(try obj.send("sum:::::", arguments: [1, 2, 3, 4, 5, 6]).intValue, 654321, "arguments on the stack")
        XCTAssertEqual((try obj.send("className") as CString).string, cls.name)
        XCTAssertEqual(try obj.send("cmd") as Selector, Selector("cmd"))
        XCTAssertEqual(try obj.send("classOf:", obj.ref) as ClassRef, ClassRef(cls))
        XCTAssertEqual(try obj.send("classOf:", obj.ref).description, cls.name)
        let me: Object? = try obj.send("me")
        XCTAssertEqual(me, obj)
        XCTAssertEqual(obj.retainCount, 2)
        XCTAssertEqual(fx_call_object_and_release(obj.raw, "me"), 3, "C owns the +1 it gets back")
    }

    func testStructsByValueAcrossTheBoundary() throws {
        XCTAssertEqual(MemoryLayout<FxPoint>.size, MemoryLayout<fx_point>.size)
        XCTAssertEqual(MemoryLayout<FxQuad>.size, MemoryLayout<fx_quad>.size)
        XCTAssertEqual(MemoryLayout<FxMixed>.size, MemoryLayout<fx_mixed>.size)
        try cls.addMethod("point:scaledBy:", implementation: imp(fx_point_scale as @convention(c) (sf_id?, sf_sel?, fx_point, Double) -> fx_point),
                          types: "{fx_point=dd}@:{fx_point=dd}d")
        try cls.addMethod("reverse:", implementation: imp(fx_quad_reverse as @convention(c) (sf_id?, sf_sel?, fx_quad) -> fx_quad),
                          types: "{fx_quad=qqqq}@:{fx_quad=qqqq}")
        try cls.addMethod("mixed:", implementation: imp(fx_mixed_sum as @convention(c) (sf_id?, sf_sel?, fx_mixed) -> Double),
                          types: "d@:{fx_mixed=cid}")
        XCTAssertEqual(try obj.send("point:scaledBy:", FxPoint(x: 1, y: -2), 3.0) as FxPoint, FxPoint(x: 3, y: -6))
        XCTAssertEqual(try obj.send("point:scaledBy:", FxPoint(x: 1, y: -2), 3.0).structValue(as: FxPoint.self), FxPoint(x: 3, y: -6))
        XCTAssertEqual(try obj.send("reverse:", FxQuad(a: 1, b: 2, c: 3, d: 4)) as FxQuad, FxQuad(a: 4, b: 3, c: 2, d: 1))
        XCTAssertEqual(try obj.send("reverse:", FxQuad(a: 1, b: 2, c: 3, d: 4)).structValue(as: FxQuad.self), FxQuad(a: 4, b: 3, c: 2, d: 1))
        XCTAssertEqual(try obj.send("mixed:", FxMixed(c: 2, i: 30, d: 0.5)) as Double, 32.5)
        XCTAssertEqual(try obj.send("mixed:", FxMixed(c: -2, i: 30, d: 0.5)).doubleValue, 28.5)

        // And a Swift closure with the same struct signature answers C callers the same way.
        try cls.addMethod("swiftPoint:scaledBy:") { (_: ObjectRef, p: FxPoint, k: Double) in FxPoint(x: p.x * k, y: p.y * k) }
        typealias Fn = @convention(c) (sf_id, sf_sel, fx_point, Double) -> fx_point
        let sel = Selector("swiftPoint:scaledBy:")
        let f = unsafeBitCast(sf_msg_lookup(obj.raw, sel.raw)!, to: Fn.self)
        let r = f(obj.raw, sel.raw, fx_point(x: 2, y: 3), 0.5)
        XCTAssertEqual([r.x, r.y], [1, 1.5])
    }

    func testMissingMethodFromCAndSwift() throws {
        XCTAssertEqual(fx_lookup_status(obj.raw, "noSuchMethod:"), SF_ERR_UNRECOGNIZED_SELECTOR)
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("-[\(cls.name) noSuchMethod:]"))
        XCTAssertNil(sf_msg_lookup(obj.raw, Selector("noSuchMethod:").raw))
        XCTAssertEqual(sf_last_error(), SF_ERR_UNRECOGNIZED_SELECTOR)
        var out = -7
        XCTAssertEqual(fx_send_long2(obj.raw, "noSuchMethod:", 1, 2, &out), SF_ERR_UNRECOGNIZED_SELECTOR)
        XCTAssertEqual(out, -7, "nothing is written on a miss")
        XCTAssertEqual(fx_call_long2(obj.raw, "noSuchMethod:", 1, 2, -99), -99)
        assertThrowsUnrecognized { try self.obj.send("noSuchMethod:", 1, 2) as Int }
        XCTAssertEqual(fx_lookup_status(nil, "anything"), SF_ERR_NIL_RECEIVER)
        XCTAssertEqual(fx_send_long2(nil, "anything", 1, 2, &out), SF_ERR_NIL_RECEIVER)
        XCTAssertEqual(sf_last_error(), SF_ERR_NIL_RECEIVER, "the return value and the recorded error agree")
    }

    private func assertThrowsUnrecognized(_ body: () throws -> Int) {
        XCTAssertThrowsError(try body()) { error in
            XCTAssertEqual(error as? RuntimeError,
                           .doesNotRecognizeSelector(.init(className: cls.name, selector: "noSuchMethod:", isClassMethod: false)))
        }
    }

    /// A C caller holds a bare IMP: a replaced closure stays callable until the class goes.
    func testReplacedClosureIMPStaysCallableFromC() throws {
        try cls.addMethod("v") { (_: ObjectRef) in 1 }
        let sel = Selector("v")
        let types = "q@:"
        let new: @convention(c) (sf_id?, sf_sel?) -> Int = { _, _ in 2 }
        let old = types.withCString { sf_class_replaceMethod(cls.raw, sel.raw, unsafeBitCast(new, to: sf_imp.self), $0) }
        let oldIMP = try XCTUnwrap(old)
        Runtime.state.collectGarbage()
        XCTAssertEqual(unsafeBitCast(oldIMP, to: (@convention(c) (sf_id, sf_sel) -> Int).self)(obj.raw, sel.raw), 1)
        XCTAssertEqual(fx_call_long2(obj.raw, "v", 0, 0, -1), 2)
    }

    func testErrorCodesMatchRuntimeErrors() {
        XCTAssertEqual(RuntimeError.doesNotRecognizeSelector(.init(className: "", selector: "", isClassMethod: false)).code, SF_ERR_UNRECOGNIZED_SELECTOR)
        XCTAssertEqual(RuntimeError.duplicateClass(.init(className: "")).code, SF_ERR_DUPLICATE_CLASS)
        XCTAssertEqual(RuntimeError.malformedEncoding(.init(actual: "", offset: 0, reason: "")).code, SF_ERR_BAD_ENCODING)
        XCTAssertEqual(RuntimeError.signatureMismatch(.init(className: "", selector: "", expected: "", actual: "")).code, SF_ERR_SIGNATURE_MISMATCH)
        XCTAssertEqual(RuntimeError.invalidArgument(.init(className: "", selector: "", reason: "")).code, SF_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(RuntimeError.classInUse(.init(className: "", reason: "")).code, SF_ERR_CLASS_IN_USE)
        XCTAssertEqual(RuntimeError.methodExists(.init(className: "", selector: "")).code, SF_ERR_METHOD_EXISTS)
        XCTAssertEqual(RuntimeError.classAlreadyRegistered(.init(className: "", operation: "")).code, SF_ERR_CLASS_REGISTERED)
        XCTAssertEqual(RuntimeError.noSuchMethod(.init(className: "", selector: "")).code, SF_ERR_NO_SUCH_METHOD)
        XCTAssertEqual(RuntimeError.reservedSelector(.init(className: "", selector: "", reason: "")).code, SF_ERR_RESERVED_SELECTOR)
    }
}
