import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// C-callable implementations written as Swift closures, as a C library would provide them.
private let cAdd: @convention(c) (sf_id?, sf_sel?, Int, Int) -> Int = { _, _, a, b in a + b }
private let cSub: @convention(c) (sf_id?, sf_sel?, Int, Int) -> Int = { _, _, a, b in a - b }
private let cMul: @convention(c) (sf_id?, sf_sel?, Int, Int) -> Int = { _, _, a, b in a * b }
private let cHalf: @convention(c) (sf_id?, sf_sel?, Double) -> Double = { _, _, x in x / 2 }
private let cSelf: @convention(c) (sf_id?, sf_sel?) -> sf_id? = { obj, _ in sf_retain(obj) }

func imp<F>(_ f: F) -> IMP { IMP(unsafeBitCast(f, to: sf_imp.self)) }

final class MethodTests: ClassInstanceTestCase {
    // MARK: - Closures of every arity

    func testClosuresOfArityZeroToFourReturningValues() throws {
        try cls.addMethod("zero") { (_: ObjectRef) in 10 }
        try cls.addMethod("one:") { (_: ObjectRef, a: Int) in a + 1 }
        try cls.addMethod("two::") { (_: ObjectRef, a: Int, b: Int) in a * b }
        try cls.addMethod("three:::") { (_: ObjectRef, a: Int, b: Int, c: Int) in a - b - c }
        try cls.addMethod("four::::") { (_: ObjectRef, a: Int, b: Int, c: Int, d: Int) in a * 1000 + b * 100 + c * 10 + d }
        XCTAssertEqual(try obj.send("zero") as Int, 10)
        XCTAssertEqual(try obj.send("one:", 4) as Int, 5)
        XCTAssertEqual(try obj.send("two::", 6, 7) as Int, 42)
        XCTAssertEqual(try obj.send("three:::", 10, 3, 2) as Int, 5)
        XCTAssertEqual(try obj.send("four::::", 1, 2, 3, 4) as Int, 1234)
        XCTAssertEqual(try obj.send("four::::", 1, 2, 3, 4).intValue, 1234, "the dynamic path agrees")
        XCTAssertEqual(cls.ownMethod(for: "four::::")?.signature.encoding, "q@:qqqq")
    }

    func testVoidClosuresOfArityZeroToFour() throws {
        nonisolated(unsafe) var calls: [[Int]] = []
        try cls.addMethod("v0") { (_: ObjectRef) in calls.append([]) }
        try cls.addMethod("v1:") { (_: ObjectRef, a: Int) in calls.append([a]) }
        try cls.addMethod("v2::") { (_: ObjectRef, a: Int, b: Int) in calls.append([a, b]) }
        try cls.addMethod("v3:::") { (_: ObjectRef, a: Int, b: Int, c: Int) in calls.append([a, b, c]) }
        try cls.addMethod("v4::::") { (_: ObjectRef, a: Int, b: Int, c: Int, d: Int) in calls.append([a, b, c, d]) }
        try obj.send("v0", as: Void.self)
        try obj.send("v1:", 1, as: Void.self)
        try obj.send("v2::", 1, 2, as: Void.self)
        try obj.send("v3:::", 1, 2, 3, as: Void.self)
        try obj.send("v4::::", 1, 2, 3, 4, as: Void.self)
        if case .void = try obj.send("v4::::", 5, 6, 7, 8) {} else { XCTFail("a void send returns .void") }
        XCTAssertEqual(calls, [[], [1], [1, 2], [1, 2, 3], [1, 2, 3, 4], [5, 6, 7, 8]])
        XCTAssertEqual(cls.ownMethod(for: "v2::")?.signature.encoding, "v@:qq")
    }

    func testTheReceiverIsPassedToTheClosure() throws {
        nonisolated(unsafe) let seen = UnsafeMutablePointer<sf_id?>.allocate(capacity: 1)
        defer { seen.deallocate() }
        try cls.addMethod("me") { (self_: ObjectRef) in seen.pointee = self_.raw }
        try obj.send("me", as: Void.self)
        XCTAssertEqual(seen.pointee, obj.raw)
    }

    // MARK: - Declared types

    func testDeclaredTypesMustMatchTheClosure() throws {
        try cls.addMethod("ok:", types: "q@:q") { (_: ObjectRef, a: Int) in a }
        try cls.addMethod("long:", types: "l16@0:8l", { (_: ObjectRef, a: Int) in a })
        assertThrows(.signatureMismatch(.init(className: cls.name, selector: "bad:", expected: "i@:q", actual: "q@:q"))) {
            try cls.addMethod("bad:", types: "i@:q") { (_: ObjectRef, a: Int) in a }
        }
        assertThrows(.signatureMismatch(.init(className: cls.name, selector: "count:", expected: "q@:qq", actual: "q@:q"))) {
            try cls.addMethod("count:", types: "q@:qq") { (_: ObjectRef, a: Int) in a }
        }
        assertThrows(.signatureMismatch(.init(className: cls.name, selector: "ret", expected: "d@:", actual: "v@:"))) {
            try cls.addMethod("ret", types: "d@:") { (_: ObjectRef) in }
        }
        guard case .malformedEncoding? = thrownError({ try cls.addMethod("enc", types: "q@") { (_: ObjectRef) in 1 } }) else {
            return XCTFail("a malformed declared encoding throws malformedEncoding")
        }
        XCTAssertNil(cls.ownMethod(for: "bad:"))
        XCTAssertNil(cls.ownMethod(for: "enc"))
        XCTAssertEqual(try obj.send("ok:", 3) as Int, 3)
    }

    func testMalformedTypesForCFunctionsThrow() {
        guard case .malformedEncoding(let context)? = thrownError({ try cls.addMethod("f", implementation: imp(cAdd), types: "q@:x") }) else {
            return XCTFail()
        }
        XCTAssertEqual(context.offset, 3)
        XCTAssertEqual(context.actual, "q@:x")
        XCTAssertFalse(cls.responds(to: "f"))
    }

    // MARK: - C function pointers

    func testCFunctionImplementations() throws {
        try cls.addMethod("add:to:", implementation: imp(cAdd), types: "q@:qq")
        try cls.addMethod("half:", implementation: imp(cHalf), types: "d@:d")
        try cls.addMethod("me", implementation: imp(cSelf), types: "@@:")
        XCTAssertEqual(try obj.send("add:to:", 2, 3) as Int, 5)
        XCTAssertEqual(try obj.send("half:", 5.0) as Double, 2.5)
        let me: Object? = try obj.send("me")
        XCTAssertEqual(me?.raw, obj.raw)
        XCTAssertFalse(cls.ownMethod(for: "add:to:")!.implementation.isClosure)
        XCTAssertEqual(cls.ownMethod(for: "add:to:")!.implementation, imp(cAdd))
    }

    func testAddingAnExistingMethodThrows() throws {
        try cls.addMethod("x") { (_: ObjectRef) in 1 }
        assertThrows(.methodExists(.init(className: cls.name, selector: "x"))) { try cls.addMethod("x") { (_: ObjectRef) in 2 } }
        assertThrows(.methodExists(.init(className: cls.name, selector: "x"))) { try cls.addMethod("x", implementation: imp(cSelf), types: "@@:") }
        XCTAssertEqual(try obj.send("x") as Int, 1)
    }

    func testReservedSelectorsAreRefused() {
        for name in [".cxx_destruct"] {
            guard case .reservedSelector(let context)? = thrownError({ try cls.addMethod(Selector(name)) { (_: ObjectRef) in } }) else {
                return XCTFail(name)
            }
            XCTAssertEqual(context.className, cls.name)
            XCTAssertEqual(context.selector, name)
        }
    }

    func testAddingToASubclassDoesNotTouchTheSuperclass() throws {
        let sub = try RuntimeClass(name: uniqueName("Sub"), superclass: cls)
        try cls.addMethod("v") { (_: ObjectRef) in 1 }
        try sub.addMethod("v") { (_: ObjectRef) in 2 }
        XCTAssertEqual(try obj.send("v") as Int, 1)
        XCTAssertEqual(try sub.createInstance().send("v") as Int, 2)
    }

    // MARK: - Replace

    func testReplaceReturnsThePreviousIMPWhichStaysCallable() throws {
        try cls.addMethod("value") { (_: ObjectRef) in 1 }
        let old = try XCTUnwrap(try cls.replaceMethod("value") { (_: ObjectRef) in 2 })
        XCTAssertTrue(old.isClosure)
        XCTAssertEqual(try obj.send("value") as Int, 2)
        // Past the grace period the runtime no longer holds the old closure; the IMP value does.
        Runtime.state.collectGarbage()
        let call = unsafeBitCast(old.pointer, to: (@convention(c) (sf_id, sf_sel) -> Int).self)
        XCTAssertEqual(call(obj.raw, Selector("value").raw), 1)

        // Replacing with a C function hands back the closure before it, then the C function.
        let second = try XCTUnwrap(try cls.replaceMethod("value", implementation: imp(cSelfCount), types: "q@:"))
        XCTAssertTrue(second.isClosure)
        Runtime.state.collectGarbage()
        XCTAssertEqual(unsafeBitCast(second.pointer, to: (@convention(c) (sf_id, sf_sel) -> Int).self)(obj.raw, Selector("value").raw), 2)
        XCTAssertEqual(try obj.send("value") as Int, 99)
        let third = try cls.replaceMethod("value") { (_: ObjectRef) in 3 }
        XCTAssertEqual(third, imp(cSelfCount))
        XCTAssertEqual(try obj.send("value") as Int, 3)
    }

    func testReplaceAddsWhenMissingAndReturnsNil() throws {
        XCTAssertNil(try cls.replaceMethod("fresh:") { (_: ObjectRef, a: Int) in a * 3 })
        XCTAssertEqual(try obj.send("fresh:", 5) as Int, 15)
        XCTAssertNil(try cls.replaceMethod("freshC:to:", implementation: imp(cAdd), types: "q@:qq"))
        XCTAssertEqual(try obj.send("freshC:to:", 5, 6) as Int, 11)
    }

    func testReplaceOnSubclassShadowsWithoutChangingTheSuperclass() throws {
        try cls.addMethod("v") { (_: ObjectRef) in 1 }
        let sub = try RuntimeClass(name: uniqueName("Sub"), superclass: cls)
        let subObj = try sub.createInstance()
        XCTAssertEqual(try subObj.send("v") as Int, 1)
        XCTAssertNil(try sub.replaceMethod("v") { (_: ObjectRef) in 2 }, "the subclass had no own method")
        XCTAssertEqual(try subObj.send("v") as Int, 2)
        XCTAssertEqual(try obj.send("v") as Int, 1)
    }

    func testReplaceWithAnIncompatibleSignatureThrows() throws {
        try cls.addMethod("v:") { (_: ObjectRef, a: Int) in a }
        assertThrows(.signatureMismatch(.init(className: cls.name, selector: "v:", expected: "q@:q", actual: "d@:q"))) {
            try cls.replaceMethod("v:") { (_: ObjectRef, a: Int) in Double(a) }
        }
        assertThrows(.signatureMismatch(.init(className: cls.name, selector: "v:", expected: "q@:q", actual: "q@:qq"))) {
            try cls.replaceMethod("v:", implementation: imp(cAdd), types: "q@:qq")
        }
        // `l` and `q` are the same machine type: compatible.
        XCTAssertNotNil(try cls.replaceMethod("v:", implementation: imp(cSelfCountArg), types: "l@:l"))
        XCTAssertEqual(try obj.send("v:", 1) as Int, 100)
    }

    // MARK: - Exchange and remove

    func testExchangeSwapsOwnImplementations() throws {
        try cls.addMethod("a:b:", implementation: imp(cAdd), types: "q@:qq")
        try cls.addMethod("s:b:", implementation: imp(cSub), types: "q@:qq")
        XCTAssertEqual(try obj.send("a:b:", 5, 3) as Int, 8)
        try cls.exchangeImplementations("a:b:", "s:b:")
        XCTAssertEqual(try obj.send("a:b:", 5, 3) as Int, 2)
        XCTAssertEqual(try obj.send("s:b:", 5, 3) as Int, 8)
        try cls.exchangeImplementations("a:b:", "s:b:")
        XCTAssertEqual(try obj.send("a:b:", 5, 3) as Int, 8)
    }

    func testExchangeOfClosureImplementations() throws {
        try cls.addMethod("p") { (_: ObjectRef) in 1 }
        try cls.addMethod("q") { (_: ObjectRef) in 2 }
        try cls.exchangeImplementations("p", "q")
        Runtime.state.collectGarbage()
        XCTAssertEqual(try obj.send("p") as Int, 2)
        XCTAssertEqual(try obj.send("q") as Int, 1)
    }

    func testExchangeOfInheritedMethodsLeavesTheSuperclassAlone() throws {
        try cls.addMethod("a:b:", implementation: imp(cAdd), types: "q@:qq")
        try cls.addMethod("m:b:", implementation: imp(cMul), types: "q@:qq")
        let sub = try RuntimeClass(name: uniqueName("Sub"), superclass: cls)
        let subObj = try sub.createInstance()
        XCTAssertEqual(try subObj.send("a:b:", 5, 3) as Int, 8, "caches the inherited method first")
        try sub.exchangeImplementations("a:b:", "m:b:")
        XCTAssertEqual(try subObj.send("a:b:", 5, 3) as Int, 15)
        XCTAssertEqual(try subObj.send("m:b:", 5, 3) as Int, 8)
        XCTAssertEqual(try obj.send("a:b:", 5, 3) as Int, 8)
        XCTAssertEqual(try obj.send("m:b:", 5, 3) as Int, 15)
        XCTAssertEqual(Set(sub.methodList.map(\.selector.name)), ["a:b:", "m:b:"])
    }

    func testExchangeErrors() throws {
        try cls.addMethod("a:b:", implementation: imp(cAdd), types: "q@:qq")
        try cls.addMethod("h:", implementation: imp(cHalf), types: "d@:d")
        assertThrows(.noSuchMethod(.init(className: cls.name, selector: "none"))) { try cls.exchangeImplementations("none", "a:b:") }
        assertThrows(.noSuchMethod(.init(className: cls.name, selector: "none"))) { try cls.exchangeImplementations("a:b:", "none") }
        assertThrows(.signatureMismatch(.init(className: cls.name, selector: "h:", expected: "q@:qq", actual: "d@:d"))) {
            try cls.exchangeImplementations("a:b:", "h:")
        }
        XCTAssertEqual(try obj.send("a:b:", 1, 2) as Int, 3, "a failed exchange changes nothing")
    }

    func testRemoveFallsBackToTheInheritedMethod() throws {
        let sub = try RuntimeClass(name: uniqueName("Sub"), superclass: cls)
        let subObj = try sub.createInstance()
        try cls.addMethod("v") { (_: ObjectRef) in 1 }
        try sub.addMethod("v") { (_: ObjectRef) in 2 }
        XCTAssertEqual(try subObj.send("v") as Int, 2)
        try sub.removeMethod("v")
        XCTAssertEqual(try subObj.send("v") as Int, 1)
        try cls.removeMethod("v")
        assertThrows(.doesNotRecognizeSelector(.init(className: sub.name, selector: "v", isClassMethod: false))) {
            try subObj.send("v") as Int
        }
        assertThrows(.noSuchMethod(.init(className: cls.name, selector: "v"))) { try cls.removeMethod("v") }
        assertThrows(.noSuchMethod(.init(className: sub.name, selector: "never"))) { try sub.removeMethod("never") }
        // Removed, it can be added again.
        try cls.addMethod("v") { (_: ObjectRef) in 3 }
        XCTAssertEqual(try subObj.send("v") as Int, 3)
    }

    /// A `Method` value keeps its record alive, so it must stay readable after the method is
    /// removed from its class (removal only unpublishes it).
    func testAMethodValueOutlivesRemoval() throws {
        try cls.addMethod("gone") { (_: ObjectRef) in 5 }
        let method = try XCTUnwrap(cls.ownMethod(for: "gone"))
        let imp = method.implementation
        try cls.removeMethod("gone")
        Runtime.state.collectGarbage()
        // Reuse the freed memory the way later allocations would.
        let filler = (0..<64).map { _ in
            UnsafeMutableRawPointer.allocate(byteCount: sf_method_struct_size(), alignment: 16)
                .initializeMemory(as: UInt8.self, repeating: 0xA5, count: sf_method_struct_size())
        }
        defer { filler.forEach { $0.deallocate() } }
        XCTAssertEqual(method.implementation, imp)
        XCTAssertEqual(sf_method_getName(method.raw), Selector("gone").raw)
    }

    func testRawBodyClosures() throws {
        try cls.addMethod("sum3:::", types: "q@:qiq") { ret, args in
            let a = args[2]!.load(as: Int64.self)
            let b = args[3]!.load(as: Int32.self)
            let c = args[4]!.load(as: Int64.self)
            ret.storeBytes(of: a + Int64(b) + c, as: Int64.self)
        }
        XCTAssertEqual(try obj.send("sum3:::", 1, Int32(2), 3) as Int, 6)
        XCTAssertEqual(try obj.send("sum3:::", 1, Int32(-2), 3).intValue, 2)
    }

    func testClassMethodsThroughTheMetaclass() throws {
        try cls.metaclass.addMethod("make") { (_: ObjectRef) in 77 }
        try cls.addClassMethod("add:to:", implementation: imp(cAdd), types: "q@:qq")
        XCTAssertEqual(try cls.send("make") as Int, 77)
        XCTAssertEqual(try cls.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(try cls.send("add:to:", 1, 2).intValue, 3)
        assertThrows(.doesNotRecognizeSelector(.init(className: cls.name, selector: "make", isClassMethod: false))) {
            try obj.send("make") as Int
        }
        XCTAssertEqual(cls.metaclass.ownMethod(for: "make")?.description, "+[\(cls.name) make] q@:")
    }
}

private let cSelfCount: @convention(c) (sf_id?, sf_sel?) -> Int = { _, _ in 99 }
private let cSelfCountArg: @convention(c) (sf_id?, sf_sel?, Int) -> Int = { _, _, _ in 100 }
