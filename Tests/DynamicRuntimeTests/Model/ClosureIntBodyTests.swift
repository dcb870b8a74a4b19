// Bench cases 3a, 3b: closures of `Int` arguments returning `Int` take their own
// overloads (`@IntMethodBody`), which keep the closure at its own type so that C callers and
// typed sends call it without a reabstraction thunk. Each arity is checked against the generic
// path (the same body through the generic overloads, as `Int64`, which encodes the same), and
// the overload choice is checked for the closures people write without annotations.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class ClosureIntBodyTests: XCTestCase {
    override func setUp() {
        super.setUp()
        sf_tramp_set_enabled(1)
    }

    private typealias Id = sf_id?
    private typealias Sel = sf_sel?

    private func box(_ cls: RuntimeClass, _ selector: Selector) -> ClosureIMP {
        cls.ownMethod(for: selector)!.implementation.owner!
    }

    private func encoding(_ cls: RuntimeClass, _ selector: Selector) -> String {
        cls.ownMethod(for: selector)!.signature.encoding
    }

    /// The value `n` arguments produce in every body below: distinct weights, so that an
    /// argument read from the wrong register shows.
    private static func expected(_ args: [Int]) -> Int {
        args.enumerated().reduce(-1_000_003) { $0 &+ $1.element &* Int(1 << (8 * $1.offset)) }
    }

    func testEveryArityAgreesWithTheGenericPath() throws {
        let fast = try makeClass("IntBodyFast"), generic = try makeClass("IntBodyGeneric")
        let f = Self.expected
        try fast.addMethod("m0") { (_: ObjectRef) in f([]) }
        try fast.addMethod("m1:") { (_: ObjectRef, a: Int) in f([a]) }
        try fast.addMethod("m2:b:") { (_: ObjectRef, a: Int, b: Int) in f([a, b]) }
        try fast.addMethod("m3:b:c:") { (_: ObjectRef, a: Int, b: Int, c: Int) in f([a, b, c]) }
        try fast.addMethod("m4:b:c:d:") { (_: ObjectRef, a: Int, b: Int, c: Int, d: Int) in f([a, b, c, d]) }
        try generic.addMethod("m0") { (_: ObjectRef) -> Int64 in Int64(f([])) }
        try generic.addMethod("m1:") { (_: ObjectRef, a: Int64) -> Int64 in Int64(f([Int(a)])) }
        try generic.addMethod("m2:b:") { (_: ObjectRef, a: Int64, b: Int64) -> Int64 in Int64(f([Int(a), Int(b)])) }
        try generic.addMethod("m3:b:c:") { (_: ObjectRef, a: Int64, b: Int64, c: Int64) -> Int64 in Int64(f([Int(a), Int(b), Int(c)])) }
        try generic.addMethod("m4:b:c:d:") { (_: ObjectRef, a: Int64, b: Int64, c: Int64, d: Int64) -> Int64 in
            Int64(f([Int(a), Int(b), Int(c), Int(d)]))
        }
        let selectors: [Selector] = ["m0", "m1:", "m2:b:", "m3:b:c:", "m4:b:c:d:"]
        for sel in selectors {
            XCTAssertTrue(box(fast, sel).hasDirectIntBody, "\(sel.name): the Int overload kept the closure")
            XCTAssertFalse(box(generic, sel).hasDirectIntBody, "\(sel.name): Int64 goes through the generic overload")
            XCTAssertEqual(encoding(fast, sel), encoding(generic, sel))
        }
        let x = try fast.createInstance(), y = try generic.createInstance()
        for args in [[Int](), [1, 2, 3, 4], [-1, -2, -3, -4], [Int.max, Int.min, 0, 7]] {
            for (n, sel) in selectors.enumerated() {
                let a = Array((args + [0, 0, 0, 0]).prefix(n))
                let want = f(a)
                let w = (a + [0, 0, 0, 0])
                // Typed sends (the direct call) and the generic word body.
                let sent: Int, other: Int64
                switch n {
                case 0: (sent, other) = (try x.send(sel), try y.send(sel))
                case 1: (sent, other) = (try x.send(sel, w[0]), try y.send(sel, Int64(w[0])))
                case 2: (sent, other) = (try x.send(sel, w[0], w[1]), try y.send(sel, Int64(w[0]), Int64(w[1])))
                case 3: (sent, other) = (try x.send(sel, w[0], w[1], w[2]), try y.send(sel, Int64(w[0]), Int64(w[1]), Int64(w[2])))
                default:
                    (sent, other) = (try x.send(sel, w[0], w[1], w[2], w[3]),
                                     try y.send(sel, Int64(w[0]), Int64(w[1]), Int64(w[2]), Int64(w[3])))
                }
                XCTAssertEqual(sent, want, "\(sel.name) \(a): typed send")
                XCTAssertEqual(Int(other), want, "\(sel.name) \(a): generic overload")
                // C callers through the slot (the Int thunks for 0-3 arguments, the spill entry for 4).
                let imp = fast.method(for: sel)!.implementation.pointer
                let c: Int
                switch n {
                case 0: c = unsafeBitCast(imp, to: (@convention(c) (Id, Sel) -> Int).self)(x.raw, sel.raw)
                case 1: c = unsafeBitCast(imp, to: (@convention(c) (Id, Sel, Int) -> Int).self)(x.raw, sel.raw, w[0])
                case 2: c = unsafeBitCast(imp, to: (@convention(c) (Id, Sel, Int, Int) -> Int).self)(x.raw, sel.raw, w[0], w[1])
                case 3: c = unsafeBitCast(imp, to: (@convention(c) (Id, Sel, Int, Int, Int) -> Int).self)(x.raw, sel.raw, w[0], w[1], w[2])
                default:
                    c = unsafeBitCast(imp, to: (@convention(c) (Id, Sel, Int, Int, Int, Int) -> Int).self)(x.raw, sel.raw, w[0], w[1], w[2], w[3])
                }
                XCTAssertEqual(c, want, "\(sel.name) \(a): C call")
                // Dynamic sends (libffi into the slot) and the argument-vector body.
                XCTAssertEqual(try x.send(sel, arguments: a).intValue, want, "\(sel.name) \(a): dynamic send")
            }
        }
    }

    func testReplaceMethodAndDeclaredTypes() throws {
        let cls = try makeClass("IntBodyReplace")
        let o = try cls.createInstance()
        try cls.addMethod("twice:", types: "q@:q") { (_: ObjectRef, x: Int) in x * 2 }
        XCTAssertTrue(box(cls, "twice:").hasDirectIntBody, "declared types that are the closure's own")
        XCTAssertEqual(try o.send("twice:", 21) as Int, 42)
        let old = try cls.replaceMethod("twice:") { (_: ObjectRef, x: Int) in x * 3 }
        XCTAssertNotNil(old)
        XCTAssertTrue(box(cls, "twice:").hasDirectIntBody)
        XCTAssertEqual(try o.send("twice:", 2) as Int, 6)
        let call = unsafeBitCast(cls.method(for: "twice:")!.implementation.pointer, to: (@convention(c) (Id, Sel, Int) -> Int).self)
        XCTAssertEqual(call(o.raw, Selector("twice:").raw, -5), -15)
        // Types that disagree with the closure are refused as before.
        XCTAssertThrowsError(try cls.addMethod("bad:", types: "d@:d") { (_: ObjectRef, x: Int) in x }) { e in
            guard case .signatureMismatch = e as? RuntimeError else { return XCTFail("\(e)") }
        }
        // With trampolines off (SF_TRAMPOLINES=0) the closure runs through libffi, still correct.
        sf_tramp_set_enabled(0)
        defer { sf_tramp_set_enabled(1) }
        try cls.addMethod("slow:") { (_: ObjectRef, x: Int) in x - 1 }
        XCTAssertFalse(box(cls, "slow:").hasDirectIntBody)
        XCTAssertFalse(box(cls, "slow:").isTrampoline)
        XCTAssertEqual(try o.send("slow:", 10) as Int, 9)
    }

    func testAThrowingIntBodyReachesTypedSendersAndCCallers() throws {
        struct Overdrawn: Error, Equatable { let amount: Int }
        let cls = try makeClass("IntBodyThrow")
        try cls.addMethod("take:from:") { (_: ObjectRef, a: Int, b: Int) in
            guard a <= b else { throw Overdrawn(amount: a - b) }
            return b - a
        }
        let o = try cls.createInstance()
        XCTAssertTrue(box(cls, "take:from:").hasDirectIntBody)
        XCTAssertEqual(try o.send("take:from:", 3, 5) as Int, 2)
        XCTAssertThrowsError(try o.send("take:from:", 8, 5) as Int) { e in
            guard case let .implementationFailed(context) = e as? RuntimeError else { return XCTFail("\(e)") }
            XCTAssertEqual(context.className, cls.name)
            XCTAssertEqual(context.selector, "take:from:")
            XCTAssertEqual(context.underlying as? Overdrawn, Overdrawn(amount: 3))
        }
        let call = unsafeBitCast(cls.method(for: "take:from:")!.implementation.pointer,
                                 to: (@convention(c) (Id, Sel, Int, Int) -> Int).self)
        sf_clear_last_error()
        XCTAssertEqual(call(o.raw, Selector("take:from:").raw, 9, 1), 0)
        XCTAssertNotEqual(sf_last_error(), SF_OK)
        XCTAssertThrowsError(try Runtime.rethrowPending(), "the C caller's error is pending for the next Swift sender")
        XCTAssertEqual(try o.send("take:from:", 1, 1) as Int, 0)
    }

    /// Which overload a closure written without annotations picks, read back as the
    /// signature it registered.
    func testUnannotatedClosuresRegisterTheTypesTheyMean() throws {
        let cls = try makeClass("IntBodyInference")
        let seen = Locked<[Int]>([])
        try cls.addMethod("double:") { _, x in x * 2 }
        try cls.addMethod("shorthand:") { $1 * 2 }
        try cls.addMethod("times:by:") { _, a, b in a * b }
        try cls.addMethod("seven") { _ in 7 }
        try cls.addMethod("halve:") { _, x in x * 0.5 }
        try cls.replaceMethod("triple:") { _, x in x * 3 }
        // Statements that return nothing: a void method, as before the Int overloads.
        try cls.addMethod("note:") { (me: ObjectRef, x: Int) in
            seen.append(x)
            _ = me
        }
        try cls.addMethod("noteBoth:and:") { (_: ObjectRef, a: Int, b: Int) in
            seen.append(a)
            seen.append(b)
        }
        try cls.addMethod("noteOne:") { (_: ObjectRef, x: Int) in seen.append(x) }
        // Statements that return an Int, with and without a declared return type.
        try cls.addMethod("clamp:") { (_: ObjectRef, x: Int) in
            if x < 0 { return 0 }
            return x
        }
        try cls.addMethod("narrow:") { (_: ObjectRef, x: Int) -> Int32 in Int32(truncatingIfNeeded: x) }

        XCTAssertEqual(encoding(cls, "double:"), "q@:q")
        XCTAssertEqual(encoding(cls, "shorthand:"), "q@:q")
        XCTAssertEqual(encoding(cls, "times:by:"), "q@:qq")
        XCTAssertEqual(encoding(cls, "seven"), "q@:")
        XCTAssertEqual(encoding(cls, "halve:"), "d@:d")
        XCTAssertEqual(encoding(cls, "triple:"), "q@:q")
        XCTAssertEqual(encoding(cls, "note:"), "v@:q")
        XCTAssertEqual(encoding(cls, "noteBoth:and:"), "v@:qq")
        XCTAssertEqual(encoding(cls, "noteOne:"), "v@:q")
        XCTAssertEqual(encoding(cls, "clamp:"), "q@:q")
        XCTAssertEqual(encoding(cls, "narrow:"), "i@:q")
        for sel: Selector in ["double:", "shorthand:", "times:by:", "seven", "triple:", "clamp:"] {
            XCTAssertTrue(box(cls, sel).hasDirectIntBody, "\(sel.name) took the Int overload")
        }

        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("double:", 21) as Int, 42)
        XCTAssertEqual(try o.send("shorthand:", -4) as Int, -8)
        XCTAssertEqual(try o.send("times:by:", 6, 7) as Int, 42)
        XCTAssertEqual(try o.send("seven") as Int, 7)
        XCTAssertEqual(try o.send("halve:", 3.0) as Double, 1.5)
        XCTAssertEqual(try o.send("clamp:", -3) as Int, 0)
        try o.send("note:", 1, as: Void.self)
        try o.send("noteBoth:and:", 2, 3, as: Void.self)
        try o.send("noteOne:", 4, as: Void.self)
        XCTAssertEqual(seen.current, [1, 2, 3, 4])
    }
}
