import TestSupport
import XCTest
@testable import DynamicRuntime

/// Methods of more arguments than the fixed-arity overloads take: added from a closure,
/// sent typed, replaced, and checked against a mismatched send.
final class AnyArityMethodTests: XCTestCase {
    func testSixArgumentClosureMethodSentTyped() throws {
        let cls = try makeClass("AnyAritySix")
        try cls.addMethod("combine:b:c:d:e:f:") { (_: ObjectRef, a: Int, b: Int, c: Int, d: Int, e: Int, f: Int) -> Int in
            a * 100_000 + b * 10_000 + c * 1_000 + d * 100 + e * 10 + f
        }
        XCTAssertEqual(cls.method(for: "combine:b:c:d:e:f:")?.signature.encoding, "q@:qqqqqq")
        let obj = try cls.createInstance()
        let r: Int = try obj.ref.send("combine:b:c:d:e:f:", 1, 2, 3, 4, 5, 6)
        XCTAssertEqual(r, 123_456)
        let again: Int = try obj.ref.send("combine:b:c:d:e:f:", 6, 5, 4, 3, 2, 1)
        XCTAssertEqual(again, 654_321)
    }

    func testMixedTypesAndVoidReturn() throws {
        let cls = try makeClass("AnyArityMixed")
        let seen = Locked<[String]>([])
        try cls.addMethod("log:b:c:d:e:") { (_: ObjectRef, a: Int, b: Double, c: Bool, d: Int32, e: Selector) in
            seen.withLock { $0.append("\(a) \(b) \(c) \(d) \(e.name)") }
        }
        XCTAssertEqual(cls.method(for: "log:b:c:d:e:")?.signature.encoding, "v@:qdBi:")
        let obj = try cls.createInstance()
        try obj.ref.send("log:b:c:d:e:", 7, 2.5, true, Int32(-3), Selector("tag"), as: Void.self)
        XCTAssertEqual(seen.withLock { $0 }, ["7 2.5 true -3 tag"])
    }

    func testReplaceSixArgumentMethodReturnsPrevious() throws {
        let cls = try sixArgumentSum("AnyArityReplace")
        let old = cls.method(for: "sum:b:c:d:e:f:")!.implementation
        let previous = try cls.replaceMethod("sum:b:c:d:e:f:") { (_: ObjectRef, a: Int, b: Int, c: Int, d: Int, e: Int, f: Int) -> Int in
            a * b * c * d * e * f
        }
        XCTAssertEqual(previous.map { unsafeBitCast($0.pointer, to: UnsafeRawPointer.self) },
                       unsafeBitCast(old.pointer, to: UnsafeRawPointer.self))
        let obj = try cls.createInstance()
        let r: Int = try obj.ref.send("sum:b:c:d:e:f:", 1, 2, 3, 4, 5, 6)
        XCTAssertEqual(r, 720)
    }

    func testMismatchedSixArgumentSendThrows() throws {
        let cls = try sixArgumentSum("AnyArityMismatch")
        let obj = try cls.createInstance()
        let error = thrownError { try obj.ref.send("sum:b:c:d:e:f:", 1, 2, 3, 4, 5, 6.0, as: Int.self) }
        guard case .signatureMismatch(let info)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(info.selector, "sum:b:c:d:e:f:")
        XCTAssertEqual(info.expected, "q@:qqqqqq")
        XCTAssertEqual(info.actual, "q@:qqqqqd")
    }

    func testBodyErrorReachesTheSixArgumentSender() throws {
        struct Refused: Error {}
        let cls = try makeClass("AnyArityThrows")
        try cls.addMethod("check:b:c:d:e:f:") { (_: ObjectRef, a: Int, _: Int, _: Int, _: Int, _: Int, _: Int) throws -> Int in
            if a < 0 { throw Refused() }
            return a
        }
        let obj = try cls.createInstance()
        let ok: Int = try obj.ref.send("check:b:c:d:e:f:", 5, 0, 0, 0, 0, 0)
        XCTAssertEqual(ok, 5)
        let error = thrownError { try obj.ref.send("check:b:c:d:e:f:", -1, 0, 0, 0, 0, 0, as: Int.self) }
        guard case .implementationFailed(let info)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(info.underlying is Refused)
    }

    func testSixArgumentSendToMissingMethodThrowsUnrecognized() throws {
        let cls = try makeClass("AnyArityMissing")
        let obj = try cls.createInstance()
        let error = thrownError { try obj.ref.send("nothing:b:c:d:e:f:", 1, 2, 3, 4, 5, 6, as: Int.self) }
        guard case .doesNotRecognizeSelector(let info)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertEqual(info.selector, "nothing:b:c:d:e:f:")
    }

    func testHookedSixArgumentMethodSeesArgumentsAndOverridesReturn() throws {
        let cls = try sixArgumentSum("AnyArityHooked")
        let seen = Locked<[String]>([])
        let token = try cls.hook("sum:b:c:d:e:f:", .after) { ctx in
            seen.withLock { $0.append(ctx.argumentValues.map(\.description).joined(separator: ",") + "=" + ctx.returnValue.description) }
            try ctx.setReturnValue(DynamicValue.int64(-1))
        }
        let obj = try cls.createInstance()
        let hooked: Int = try obj.ref.send("sum:b:c:d:e:f:", 1, 2, 3, 4, 5, 6)
        XCTAssertEqual(hooked, -1)
        XCTAssertEqual(seen.current, ["1,2,3,4,5,6=21"])
        token.remove()
        let plain: Int = try obj.ref.send("sum:b:c:d:e:f:", 1, 2, 3, 4, 5, 6)
        XCTAssertEqual(plain, 21)
    }

    func testSixArgumentSendIsForwardedToTheTarget() throws {
        let helper = try sixArgumentSum("AnyArityTarget")
        let target = try helper.createInstance()
        let cls = try makeClass("AnyArityForwarder")
        try cls.addMethod("forwardingTargetForSelector:") { (_: ObjectRef, sel: Selector) -> Object? in
            sel.name == "sum:b:c:d:e:f:" ? target : nil
        }
        let obj = try cls.createInstance()
        let r: Int = try obj.ref.send("sum:b:c:d:e:f:", 10, 20, 30, 40, 50, 60)
        XCTAssertEqual(r, 210)
    }

    func testSixArgumentObjectArgumentsAndReturn() throws {
        let cls = try makeClass("AnyArityObjects")
        try cls.addMethod("pick:b:c:d:e:f:") { (_: ObjectRef, i: Int, a: Object, b: Object, c: Object, d: Object, e: Object) -> Object? in
            [a, b, c, d, e][i]
        }
        let objects = try (0..<5).map { _ in try cls.createInstance() }
        let obj = try cls.createInstance()
        let picked: Object? = try obj.ref.send("pick:b:c:d:e:f:", 3, objects[0], objects[1], objects[2], objects[3], objects[4])
        XCTAssertEqual(picked?.ref, objects[3].ref)
        XCTAssertEqual(objects[3].retainCount, 2)
    }

    func testSevenArgumentVoidMethodReplaced() throws {
        let cls = try makeClass("AnyAritySeven")
        let total = Locked(0)
        try cls.addMethod("put:b:c:d:e:f:g:") { (_: ObjectRef, a: Int, b: Int, c: Int, d: Int, e: Int, f: Int, g: Int) in
            total.withLock { $0 = a + b + c + d + e + f + g }
        }
        try cls.replaceMethod("put:b:c:d:e:f:g:") { (_: ObjectRef, a: Int, b: Int, c: Int, d: Int, e: Int, f: Int, g: Int) in
            total.withLock { $0 = -(a + b + c + d + e + f + g) }
        }
        XCTAssertEqual(cls.method(for: "put:b:c:d:e:f:g:")?.signature.encoding, "v@:qqqqqqq")
        let obj = try cls.createInstance()
        try obj.ref.send("put:b:c:d:e:f:g:", 1, 2, 3, 4, 5, 6, 7, as: Void.self)
        XCTAssertEqual(total.current, -28)
    }

    /// A class whose `sum:b:c:d:e:f:` adds its six `Int` arguments.
    private func sixArgumentSum(_ name: String) throws -> RuntimeClass {
        let cls = try makeClass(name)
        try cls.addMethod("sum:b:c:d:e:f:") { (_: ObjectRef, a: Int, b: Int, c: Int, d: Int, e: Int, f: Int) -> Int in
            a + b + c + d + e + f
        }
        return cls
    }
}
