// Closure methods whose arguments all travel in integer registers get a typed body
// over registers (a word body): the slot's thunk and typed sends call it without an argument
// vector. Each specialised class is checked against the generic path (the same closure's body
// over an argument vector, which the spill entry and libffi closures run; the libffi closures
// themselves are checked in a child process: TrampolineFallbackTests).
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class ClosureWordBodyTests: XCTestCase {
    override func setUp() {
        super.setUp()
        sf_tramp_set_enabled(1)
    }

    /// Adds `add(cls, selector)` and returns an instance; checks that the overload built a word
    /// body and the slot leads to it.
    private func pair(_ name: String, _ selector: Selector,
                      _ add: (RuntimeClass, Selector) throws -> Void) throws -> (fast: Object, box: ClosureIMP) {
        let cls = try makeClass(name)
        try add(cls, selector)
        let box = cls.ownMethod(for: selector)!.implementation.owner!
        XCTAssertTrue(box.hasWordBody, "\(selector.name): the typed overload built a word body")
        XCTAssertTrue(box.isTrampoline)
        return (try cls.createInstance(), box)
    }

    /// The generic path: the same closure's body over an argument vector (what the spill entry
    /// and a libffi closure run); the first `size` bytes of what it returns, as a word.
    private func generic(_ p: (fast: Object, box: ClosureIMP), _ selector: Selector, _ words: [UInt64], size: Int) -> UInt64 {
        var frame = [UInt64(UInt(bitPattern: p.fast.raw)), UInt64(UInt(bitPattern: selector.raw))] + words
        var ret: (UInt64, UInt64) = (0, 0)
        frame.withUnsafeMutableBytes { f in
            var argv = (0..<f.count / 8).map { Optional(f.baseAddress! + 8 * $0) }
            withUnsafeMutableBytes(of: &ret) { r in try? p.box.body(r.baseAddress!, &argv) }
        }
        return size >= 8 ? ret.0 : ret.0 & ((1 << UInt64(8 * size)) - 1)
    }

    /// The C function behind `selector` in `object`'s class.
    private func cFunction<F>(_ object: Object, _ selector: Selector, as _: F.Type) -> F {
        unsafeBitCast(object.runtimeClass!.method(for: selector)!.implementation.pointer, to: F.self)
    }

    /// Bits of a C call's result, cut to `size` bytes.
    private func bits(_ v: UInt64, _ size: Int) -> UInt64 { size >= 8 ? v : v & ((1 << UInt64(8 * size)) - 1) }

    func testEveryRegisterCountAndReturnRegisterAgreesWithTheGenericPath() throws {
        typealias Id = sf_id?
        typealias Sel = sf_sel?

        // 0 arguments (2 registers): integer, void, double, float, sign-extended char returns.
        let voids = Locked(0)
        var o = try pair("WB0q", "value") { try $0.addMethod($1) { (_: ObjectRef) -> Int in -7 } }
        var x = o.fast
        XCTAssertEqual(try x.send("value") as Int, -7)
        var c = cFunction(x, "value", as: (@convention(c) (Id, Sel) -> Int).self)(x.raw, Selector("value").raw)
        XCTAssertEqual(c, -7)
        XCTAssertEqual(generic(o, "value", [], size: 8), UInt64(bitPattern: Int64(c)))

        o = try pair("WB0v", "touch") { try $0.addMethod($1) { (_: ObjectRef) in voids.withLock { $0 += 1 } } }
        x = o.fast
        try x.send("touch", as: Void.self)
        cFunction(x, "touch", as: (@convention(c) (Id, Sel) -> Void).self)(x.raw, Selector("touch").raw)
        _ = generic(o, "touch", [], size: 0)
        XCTAssertEqual(voids.current, 3)

        o = try pair("WB0d", "half") { try $0.addMethod($1) { (_: ObjectRef) -> Double in 0.5 } }
        x = o.fast
        XCTAssertEqual(try x.send("half") as Double, 0.5)
        let d = cFunction(x, "half", as: (@convention(c) (Id, Sel) -> Double).self)(x.raw, Selector("half").raw)
        XCTAssertEqual(d, 0.5)
        XCTAssertEqual(generic(o, "half", [], size: 8), d.bitPattern)

        o = try pair("WB0f", "third") { try $0.addMethod($1) { (_: ObjectRef) -> Float in 1.0 / 3 } }
        x = o.fast
        XCTAssertEqual(try x.send("third") as Float, 1.0 / 3)
        var f = cFunction(x, "third", as: (@convention(c) (Id, Sel) -> Float).self)(x.raw, Selector("third").raw)
        XCTAssertEqual(f, 1.0 / 3)
        XCTAssertEqual(generic(o, "third", [], size: 4), UInt64(f.bitPattern))

        o = try pair("WB0c", "minus") { try $0.addMethod($1) { (_: ObjectRef) -> Int8 in -5 } }
        x = o.fast
        XCTAssertEqual(try x.send("minus") as Int8, -5)
        // %eax sign-extended, as C callers expect and libffi's closures leave it.
        let rax = cFunction(x, "minus", as: (@convention(c) (Id, Sel) -> UInt64).self)(x.raw, Selector("minus").raw)
        XCTAssertEqual(rax & 0xFFFF_FFFF, 0xFFFF_FFFB)
        XCTAssertEqual(generic(o, "minus", [], size: 1), bits(rax, 1))

        // 1 argument (3 registers): small integers, Bool, selectors.
        o = try pair("WB1", "low:") { try $0.addMethod($1) { (_: ObjectRef, a: Int32) -> UInt16 in UInt16(truncatingIfNeeded: a) } }
        x = o.fast
        XCTAssertEqual(try x.send("low:", Int32(-2)) as UInt16, 0xFFFE)
        let u = cFunction(x, "low:", as: (@convention(c) (Id, Sel, Int32) -> UInt16).self)(x.raw, Selector("low:").raw, 65539)
        XCTAssertEqual(u, 3)
        XCTAssertEqual(generic(o, "low:", [65539], size: 2), UInt64(u))

        o = try pair("WB1b", "not:") { try $0.addMethod($1) { (_: ObjectRef, a: Bool) -> Bool in !a } }
        x = o.fast
        XCTAssertEqual(try x.send("not:", false) as Bool, true)
        XCTAssertEqual(cFunction(x, "not:", as: (@convention(c) (Id, Sel, Bool) -> Bool).self)(x.raw, Selector("not:").raw, true), false)
        XCTAssertEqual(generic(o, "not:", [1], size: 1), 0)
        XCTAssertEqual(generic(o, "not:", [0], size: 1), 1)

        o = try pair("WB1s", "echo:") { try $0.addMethod($1) { (_: ObjectRef, s: Selector) -> Selector in s } }
        x = o.fast
        XCTAssertEqual(try x.send("echo:", Selector("zap")) as Selector, Selector("zap"))
        let zap = UInt64(UInt(bitPattern: Selector("zap").raw))
        XCTAssertEqual(generic(o, "echo:", [zap], size: 8), zap)

        // 2 arguments (4 registers): the benchmark's shape, and mixed widths to a double.
        o = try pair("WB2", "add:to:") { try $0.addMethod($1) { (_: ObjectRef, a: Int, b: Int) -> Int in a &+ b } }
        x = o.fast
        XCTAssertEqual(try x.send("add:to:", 40, 2) as Int, 42)
        c = cFunction(x, "add:to:", as: (@convention(c) (Id, Sel, Int, Int) -> Int).self)(x.raw, Selector("add:to:").raw, -1, -2)
        XCTAssertEqual(c, -3)
        XCTAssertEqual(generic(o, "add:to:", [UInt64(bitPattern: -1), UInt64(bitPattern: -2)], size: 8), UInt64(bitPattern: Int64(c)))

        o = try pair("WB2d", "mix:with:") { try $0.addMethod($1) { (_: ObjectRef, a: Int16, b: UInt8) -> Double in Double(a) + Double(b) / 4 } }
        x = o.fast
        XCTAssertEqual(try x.send("mix:with:", Int16(-3), UInt8(2)) as Double, -2.5)
        let m = cFunction(x, "mix:with:", as: (@convention(c) (Id, Sel, Int16, UInt8) -> Double).self)(x.raw, Selector("mix:with:").raw, 1, 255)
        XCTAssertEqual(m, 64.75)
        XCTAssertEqual(generic(o, "mix:with:", [1, 255], size: 8), m.bitPattern)

        // 3 arguments (5 registers: the last count that leaves a register free for the context).
        o = try pair("WB3", "f:g:h:") { try $0.addMethod($1) { (_: ObjectRef, a: Int, b: Int32, c: Int8) -> Float in Float(a) * Float(b) + Float(c) } }
        x = o.fast
        XCTAssertEqual(try x.send("f:g:h:", 3, Int32(4), Int8(-1)) as Float, 11)
        f = cFunction(x, "f:g:h:", as: (@convention(c) (Id, Sel, Int, Int32, Int8) -> Float).self)(x.raw, Selector("f:g:h:").raw, 2, 2, -2)
        XCTAssertEqual(f, 2)
        XCTAssertEqual(generic(o, "f:g:h:", [2, 2, 0xFE], size: 4), UInt64(f.bitPattern))

        let last = Locked([0, 0, 0])
        o = try pair("WB3v", "set:b:c:") { try $0.addMethod($1) { (_: ObjectRef, a: Int, b: Int, c: Int) in last.set([a, b, c]) } }
        x = o.fast
        try x.send("set:b:c:", 1, 2, 3, as: Void.self)
        XCTAssertEqual(last.current, [1, 2, 3])
        cFunction(x, "set:b:c:", as: (@convention(c) (Id, Sel, Int, Int, Int) -> Void).self)(x.raw, Selector("set:b:c:").raw, 4, 5, 6)
        XCTAssertEqual(last.current, [4, 5, 6])
        _ = generic(o, "set:b:c:", [7, 8, 9], size: 0)
        XCTAssertEqual(last.current, [7, 8, 9])

        // 4 arguments (6 registers): no register left for the context, so the slot takes the
        // spill entry; typed sends still call the word body.
        o = try pair("WB4", "a:b:c:d:") { try $0.addMethod($1) { (_: ObjectRef, a: Int, b: Int, c: Int, d: UInt32) -> Int in a - b - c - Int(d) } }
        x = o.fast
        XCTAssertEqual(try x.send("a:b:c:d:", 10, 1, 2, UInt32(3)) as Int, 4)
        c = cFunction(x, "a:b:c:d:", as: (@convention(c) (Id, Sel, Int, Int, Int, UInt32) -> Int).self)(x.raw, Selector("a:b:c:d:").raw, 0, 1, 1, 1)
        XCTAssertEqual(c, -3)
        XCTAssertEqual(generic(o, "a:b:c:d:", [0, 1, 1, 1], size: 8), UInt64(bitPattern: Int64(c)))
    }

    func testSignaturesOutsideTheClassKeepTheGenericBody() throws {
        let cls = try makeClass("WBOutside")
        try cls.addMethod("scale:") { (_: ObjectRef, x: Double) -> Double in x * 2 }
        XCTAssertFalse(cls.ownMethod(for: "scale:")!.implementation.owner!.hasWordBody, "a double argument")
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("scale:", 1.5) as Double, 3)
    }

    func testAThrowingWordBodyReachesTypedSendersAndCCallers() throws {
        struct Boom: Error {}
        let cls = try makeClass("WBThrow")
        try cls.addMethod("check:") { (_: ObjectRef, x: Int) throws -> Int in
            if x < 0 { throw Boom() }
            return x
        }
        try cls.addMethod("needs:") { (_: ObjectRef, o: Object) -> Int in o.raw == nil ? 0 : 1 }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("check:", 5) as Int, 5)
        XCTAssertThrowsError(try o.send("check:", -1) as Int) { e in
            guard case let .implementationFailed(context) = e as? RuntimeError else { return XCTFail("\(e)") }
            XCTAssertEqual(context.className, cls.name)
            XCTAssertEqual(context.selector, "check:")
        }
        let call = unsafeBitCast(cls.method(for: "check:")!.implementation.pointer,
                                 to: (@convention(c) (sf_id?, sf_sel?, Int) -> Int).self)
        sf_clear_last_error()
        XCTAssertEqual(call(o.raw, Selector("check:").raw, -1), 0)
        XCTAssertNotEqual(sf_last_error(), SF_OK)
        XCTAssertThrowsError(try Runtime.rethrowPending(), "the C caller's error is pending for the next Swift sender")
        // A NULL for a non-optional object is refused before the closure runs.
        XCTAssertThrowsError(try o.send("needs:", ObjectRef.nil) as Int) { e in
            XCTAssertTrue((e as? RuntimeError)?.isInvalidArgument == true, "\(e)")
        }
        XCTAssertEqual(try o.send("needs:", o.ref) as Int, 1)
    }

    func testTypedSendsFollowHooksReplacementsAndCFunctions() throws {
        let cls = try makeClass("WBFollow")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a + b }
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        // A hook replaces the IMP with its own trampoline: typed sends must run it.
        let token = try cls.hook("add:to:", .instead) { ctx in
            try ctx.setArgument(100, at: 0)
            try ctx.proceed()
        }
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 102)
        // Replacing the hooked method: the hook wraps the new closure.
        try cls.replaceMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a * b }
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 200)
        token.remove()
        XCTAssertEqual(try o.send("add:to:", 3, 2) as Int, 6)
        // A C function installed over the closure.
        let sub: @convention(c) (sf_id?, sf_sel?, Int, Int) -> Int = { _, _, a, b in a - b }
        try cls.replaceMethod("add:to:", implementation: IMP(address: unsafeBitCast(sub, to: UnsafeRawPointer.self))!, types: "q@:qq")
        XCTAssertEqual(try o.send("add:to:", 3, 2) as Int, 1)
        // And a closure again, through the C function's place.
        try cls.replaceMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in a << b }
        XCTAssertEqual(try o.send("add:to:", 3, 2) as Int, 12)
    }
}
