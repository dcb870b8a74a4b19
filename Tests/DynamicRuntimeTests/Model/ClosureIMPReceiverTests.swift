import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// Closure IMPs called through their pointers with a receiver that is no runtime object, as
/// objc4's test/blocksAsImps.m calls block IMPs with integers as `self`: the IMP itself never
/// reads its receiver, whatever entry its signature chose; only a body that uses `self` does.
final class ClosureIMPReceiverTests: XCTestCase {
    private typealias Call0 = @convention(c) (UInt, sf_sel) -> Int
    private typealias Call1 = @convention(c) (UInt, sf_sel, Int) -> Int
    private typealias Call2 = @convention(c) (UInt, sf_sel, Int, Int) -> Int
    private typealias Call3 = @convention(c) (UInt, sf_sel, Int, Int, Int) -> Int
    private typealias Call4 = @convention(c) (UInt, sf_sel, Int, Int, Int, Int) -> Int
    private struct Boom: Error {}

    private func imp(_ m: Method) -> UnsafeRawPointer { m.implementation.address }

    /// Every entry kind of an `Int` body, throwing and not, capturing and not, 0-4 arguments.
    func testIntBodiesNeverReadTheirReceiver() throws {
        let cls = try RuntimeClass(name: uniqueClassName("BlockSelf"))
        let k = Int.random(in: 1...9)
        let sel = Selector("m").raw
        let m0 = try cls.addMethod("a0") { (_: ObjectRef) -> Int in 7 }
        let m1 = try cls.addMethod("a1:") { (_: ObjectRef, a: Int) -> Int in a + 1 }
        let m2 = try cls.addMethod("a2:b:") { (_: ObjectRef, a: Int, b: Int) -> Int in a * b + k }
        let m3 = try cls.addMethod("a3:b:c:") { (_: ObjectRef, a: Int, b: Int, c: Int) -> Int in a + b + c + k }
        let m4 = try cls.addMethod("a4:b:c:d:") { (_: ObjectRef, a: Int, b: Int, c: Int, d: Int) -> Int in a + b + c + d }
        let t0 = try cls.addMethod("t0") { (_: ObjectRef) throws -> Int in 70 + k }
        let t1 = try cls.addMethod("t1:") { (_: ObjectRef, a: Int) throws -> Int in a * 3 }
        let t2 = try cls.addMethod("t2:b:") { (_: ObjectRef, a: Int, b: Int) throws -> Int in a - b }
        let t3 = try cls.addMethod("t3:b:c:") { (_: ObjectRef, a: Int, b: Int, c: Int) throws -> Int in a * b * c }
        for receiver: UInt in [0, 1, 0x10, 0xdead_beef, UInt.max] {
            XCTAssertEqual(unsafeBitCast(imp(m0), to: Call0.self)(receiver, sel), 7)
            XCTAssertEqual(unsafeBitCast(imp(m1), to: Call1.self)(receiver, sel, 41), 42)
            XCTAssertEqual(unsafeBitCast(imp(m2), to: Call2.self)(receiver, sel, 6, 7), 42 + k)
            XCTAssertEqual(unsafeBitCast(imp(m3), to: Call3.self)(receiver, sel, 1, 2, 3), 6 + k)
            XCTAssertEqual(unsafeBitCast(imp(m4), to: Call4.self)(receiver, sel, 1, 2, 3, 4), 10)
            XCTAssertEqual(unsafeBitCast(imp(t0), to: Call0.self)(receiver, sel), 70 + k)
            XCTAssertEqual(unsafeBitCast(imp(t1), to: Call1.self)(receiver, sel, 14), 42)
            XCTAssertEqual(unsafeBitCast(imp(t2), to: Call2.self)(receiver, sel, 50, 8), 42)
            XCTAssertEqual(unsafeBitCast(imp(t3), to: Call3.self)(receiver, sel, 2, 3, 7), 42)
        }
        XCTAssertNil(sf_get_pending_error(), "no error was raised")
    }

    /// Word bodies (typed arguments in integer registers, a double return), the register entry
    /// of an untyped body, and the spill entry of a floating-point signature.
    func testWordRegisterAndSpillEntriesNeverReadTheirReceiver() throws {
        let cls = try RuntimeClass(name: uniqueClassName("BlockSelfWord"))
        let sel = Selector("m").raw
        let word = try cls.addMethod("half:") { (_: ObjectRef, a: Int) -> Double in Double(a) / 2 }
        let flags = try cls.addMethod("pick:or:") { (_: ObjectRef, a: Bool, b: Int32) -> Int32 in a ? b : -b }
        let raw = try cls.addMethod("raw:", types: "q@:q") { ret, args in
            ret.storeBytes(of: args[2]!.load(as: Int.self) * 2, as: Int.self)
        }
        let spill = try cls.addMethod("scale:by:") { (_: ObjectRef, a: Double, b: Double) -> Double in a * b }
        for receiver: UInt in [0, 1, 0x7] {
            let h = unsafeBitCast(imp(word), to: (@convention(c) (UInt, sf_sel, Int) -> Double).self)
            XCTAssertEqual(h(receiver, sel, 5), 2.5)
            let p = unsafeBitCast(imp(flags), to: (@convention(c) (UInt, sf_sel, Bool, Int32) -> Int32).self)
            XCTAssertEqual(p(receiver, sel, false, 9), -9)
            XCTAssertEqual(unsafeBitCast(imp(raw), to: Call1.self)(receiver, sel, 21), 42)
            let s = unsafeBitCast(imp(spill), to: (@convention(c) (UInt, sf_sel, Double, Double) -> Double).self)
            XCTAssertEqual(s(receiver, sel, 1.5, 4), 6)
        }
    }

    /// A body that throws, called with an integer `self`: the caller gets zero, the error names
    /// the class the method was added to (the IMP has no receiver class it could read).
    func testAThrowingBodyCalledWithAnIntegerSelfNamesItsOwner() throws {
        let cls = try RuntimeClass(name: uniqueClassName("BlockSelfThrow"))
        let sel = Selector("fail:").raw
        let entries = [
            try cls.addMethod("fail:") { (_: ObjectRef, _: Int) throws -> Int in throw Boom() },
            try cls.addMethod("failWord:") { (_: ObjectRef, _: Int) throws -> Double in throw Boom() },
            try cls.addMethod("failRaw:", types: "q@:q") { _, _ in throw Boom() },
        ]
        for m in entries {
            Runtime.dropPending()
            if m.signature.returnType == .double {
                let r = unsafeBitCast(imp(m), to: (@convention(c) (UInt, sf_sel, Int) -> Double).self)(1, sel, 3)
                XCTAssertEqual(r, 0, "\(m.selector)")
            } else {
                XCTAssertEqual(unsafeBitCast(imp(m), to: Call1.self)(1, sel, 3), 0, "\(m.selector)")
            }
            XCTAssertEqual(sf_last_error(), SF_ERR_FORWARDING, "\(m.selector)")
            let message = String(cString: sf_last_error_message())
            XCTAssertTrue(message.contains(cls.name), "\(m.selector): \(message)")
            let pending = try XCTUnwrap(sf_take_pending_error(), "\(m.selector)")
            guard case let .implementationFailed(context) = PendingError.unbox(pending) else { return XCTFail("\(m.selector)") }
            XCTAssertEqual(context.className, cls.name)
            XCTAssertEqual(context.selector, "fail:")
            XCTAssertTrue(context.underlying is Boom)
        }
    }

    /// objc4 makes 100,000 block IMPs and calls each with an integer `self`: here 5,000 closure
    /// IMPs bound to no class, each capturing its own index.
    func testManyUnboundClosureIMPsCalledWithIntegerSelf() throws {
        var imps: [IMP] = []
        for i in 0..<5_000 {
            imps.append(try IMP.closure { (_: ObjectRef, a: Int) -> Int in a + i })
        }
        let sel = Selector("m").raw
        for (i, imp) in imps.enumerated() {
            XCTAssertEqual(unsafeBitCast(imp.address, to: Call1.self)(UInt(i), sel, 1_000_000), 1_000_000 + i)
        }
    }
}
