import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// IMPs from closures and C functions bound to no class (objc4 test/imp_implementationWithBlock.m,
/// libobjc2 Test/BlockImpTest.m): shared by several classes, found again by pointer, removed
/// safely while still installed, refused where their signature does not fit.
final class UnboundIMPTests: XCTestCase {
    func testASwiftClosureIMPInTwoClasses() throws {
        let imp = try IMP.closure { (_: ObjectRef, a: Int, b: Int) -> Int in a * 10 + b }
        XCTAssertTrue(imp.isClosure)
        XCTAssertEqual(imp.closureSignature?.encoding, "q@:qq")
        XCTAssertNotNil(imp.closureBody, "imp_getBlock")
        XCTAssertNil(IMP.forwarding.closureBody)
        let a = try RuntimeClass(name: uniqueClassName("UBA"))
        let b = try RuntimeClass(name: uniqueClassName("UBB"))
        try a.addMethod("combine:with:", implementation: imp, types: "q@:qq")
        try b.addMethod("mix:with:", implementation: imp, types: "l@:ll")
        XCTAssertEqual(try a.createInstance().send("combine:with:", 4, 2) as Int, 42)
        XCTAssertEqual(try b.createInstance().send("mix:with:", 1, 7) as Int, 17)
        XCTAssertThrowsError(try a.addMethod("wrong", implementation: imp, types: "v@:")) { error in
            guard case let .signatureMismatch(context)? = error as? RuntimeError else { return XCTFail("\(error)") }
            XCTAssertEqual(context.className, a.name)
            XCTAssertEqual(context.selector, "wrong")
            XCTAssertEqual(context.expected, "v@:")
            XCTAssertTrue(context.actual?.hasPrefix("q@:qq") ?? false, "\(error)")
        }
        let raw = try IMP(types: "d@:d") { ret, args in ret.storeBytes(of: args[2]!.load(as: Double.self) * 2, as: Double.self) }
        try a.addMethod("twice:", implementation: raw, types: "d@:d")
        XCTAssertEqual(try a.createInstance().send("twice:", 1.25) as Double, 2.5)
    }

    func testACFunctionIMPRemovedWhileInstalledKeepsWorkingUntilTheLastMethodGoes() throws {
        weak var watched: CallCounter?
        let imp: sf_imp
        do {
            let context = CallCounter()
            watched = context
            imp = try XCTUnwrap(sf_imp_implementationWithFunction("q@:qq", addFunction, Unmanaged.passRetained(context).toOpaque(), releaseContext))
        }
        var context: UnsafeMutableRawPointer?
        XCTAssertNotNil(sf_imp_getFunction(imp, &context))
        XCTAssertEqual(context, watched.map { Unmanaged.passUnretained($0).toOpaque() })
        let cls = try RuntimeClass(name: uniqueClassName("UBC"))
        XCTAssertEqual(sf_class_addMethod(cls.raw, Selector("add:to:").raw, imp, "q@:qq"), SF_OK)
        XCTAssertEqual(sf_class_addMethod(cls.raw, Selector("bad").raw, imp, "v@:q"), SF_ERR_SIGNATURE_MISMATCH)
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("add:to:", 40, 2) as Int, 42)

        XCTAssertTrue(sf_imp_removeFunction(imp))
        XCTAssertFalse(sf_imp_removeFunction(imp), "removed twice")
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        XCTAssertNil(sf_imp_getFunction(imp, &context))
        XCTAssertNil(context)
        Runtime.state.collectGarbage()
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3, "the method still holds the IMP")
        XCTAssertEqual(watched?.calls, 2)

        try cls.replaceMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a - b }
        Runtime.state.collectGarbage()
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, -1)
        XCTAssertNil(watched, "the context was released once the last holder let go")
    }

    func testSetImplementationAndBadInput() throws {
        let cls = try RuntimeClass(name: uniqueClassName("UBSet"))
        let m = try cls.addMethod("value") { (_: ObjectRef) -> Int in 1 }
        let imp = try XCTUnwrap(sf_imp_implementationWithFunction("q@:", answerFunction, nil, nil))
        defer { sf_imp_removeFunction(imp) }
        XCTAssertNotNil(sf_method_setImplementation(m.raw, imp))
        XCTAssertEqual(try cls.createInstance().send("value") as Int, 42)
        let other = try cls.addMethod("other:") { (_: ObjectRef, _: Int) in }
        XCTAssertNil(sf_method_setImplementation(other.raw, imp))
        XCTAssertEqual(sf_last_error(), SF_ERR_SIGNATURE_MISMATCH)
        XCTAssertNil(sf_imp_implementationWithFunction("q@:{", answerFunction, nil, nil))
        XCTAssertEqual(sf_last_error(), SF_ERR_BAD_ENCODING)
        XCTAssertNil(sf_imp_implementationWithFunction(nil, answerFunction, nil, nil))
        XCTAssertNil(sf_imp_implementationWithFunction("q@:", nil, nil, nil))
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        XCTAssertFalse(sf_imp_removeFunction(nil))
        XCTAssertFalse(sf_imp_removeFunction(other.implementation.pointer), "a closure IMP the runtime made for a class")
        XCTAssertNil(sf_imp_getFunction(IMP.forwarding.pointer, nil))
    }
}

private final class CallCounter { var calls = 0 }

private let addFunction: sf_function_fn = { call, context in
    var a = 0, b = 0
    guard sf_call_getArgument(call, 0, &a, 8) == SF_OK, sf_call_getArgument(call, 1, &b, 8) == SF_OK else { return SF_ERR_INVALID_ARGUMENT }
    var sum = a + b
    Unmanaged<CallCounter>.fromOpaque(context!).takeUnretainedValue().calls += 1
    return sf_call_setReturnValue(call, &sum, 8)
}

private let answerFunction: sf_function_fn = { call, _ in
    var v = 42
    return sf_call_setReturnValue(call, &v, 8)
}

private let releaseContext: sf_context_release_fn = { context in
    Unmanaged<CallCounter>.fromOpaque(context!).release()
}
