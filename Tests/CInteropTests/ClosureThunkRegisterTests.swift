import CInteropFixtures
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// A C caller reaches a closure method through a slot and a thunk that moves the
/// arguments into Swift's convention (the closure's context in %r13, an error in %r12). Every
/// callee-saved register must come back as the caller left it, whichever thunk ran, thrown
/// error or not; a closure that cannot throw takes the thunk without the error check, and one
/// that also captures nothing no thunk at all (a slot that drops the selector and jumps to it).
final class ClosureThunkRegisterTests: XCTestCase {
    struct Negative: Error {}

    nonisolated(unsafe) private static let nonThrowing: [UnsafeRawPointer] = [
        unsafeBitCast(sf_tramp_int_nothrow0 as @convention(c) () -> Void, to: UnsafeRawPointer.self),
        unsafeBitCast(sf_tramp_int_nothrow1 as @convention(c) () -> Void, to: UnsafeRawPointer.self),
        unsafeBitCast(sf_tramp_int_nothrow2 as @convention(c) () -> Void, to: UnsafeRawPointer.self),
        unsafeBitCast(sf_tramp_int_nothrow3 as @convention(c) () -> Void, to: UnsafeRawPointer.self),
    ]

    private func words(_ cls: RuntimeClass, _ sel: Selector) -> (context: UnsafeMutableRawPointer?, target: UnsafeRawPointer?) {
        var context: UnsafeMutableRawPointer?, target: UnsafeRawPointer?
        sf_tramp_words(unsafeBitCast(cls.method(for: sel)!.implementation.pointer, to: UnsafeRawPointer.self), &context, &target)
        return (context, target)
    }

    enum Entry { case closureItself, nonThrowingThunk, throwingThunk }

    /// Calls `sel` from C with marker values in the callee-saved registers; the result, and
    /// whether they all came back.
    private func call(_ cls: RuntimeClass, _ o: Object, _ sel: Selector, _ args: [Int]) -> (Int, Bool) {
        let a = args + [0, 0, 0]
        var c = fx_call(imp: unsafeBitCast(cls.method(for: sel)!.implementation.pointer, to: UnsafeRawPointer.self), obj: o.raw, sel: sel.raw,
                        args: (a[0], a[1], a[2]), result: -1)
        let kept = fx_call_keeping_registers(&c) == 1
        return (c.result, kept)
    }

    func testEveryIntThunkKeepsTheCalleeSavedRegisters() throws {
        sf_tramp_set_enabled(1)
        let cls = try RuntimeClass(name: "ClosureThunkRegisters_\(UInt32.random(in: 0...UInt32.max))")
        let weights = [5, 6, 7]
        try cls.addMethod("n0") { _ in 7 }
        try cls.addMethod("n1:") { (_: ObjectRef, a: Int) in a &* 3 }
        try cls.addMethod("n2:b:") { (_: ObjectRef, a: Int, b: Int) in a &- b }
        try cls.addMethod("n3:b:c:") { (_: ObjectRef, a: Int, b: Int, c: Int) in a &* 100 &+ b &* 10 &+ c }
        // A closure with a context (it captures an array): the thunk must load it into %r13.
        try cls.addMethod("k2:b:") { (_: ObjectRef, a: Int, b: Int) in a &* weights[0] &+ b &* weights[2] }
        try cls.addMethod("t0") { (_: ObjectRef) throws -> Int in 9 }
        try cls.addMethod("t1:") { (_: ObjectRef, a: Int) throws -> Int in
            if a < 0 { throw Negative() }
            return a &+ 1
        }
        try cls.addMethod("t2:b:") { (_: ObjectRef, a: Int, b: Int) throws -> Int in
            if a < 0 { throw Negative() }
            return a &* b
        }
        try cls.addMethod("t3:b:c:") { (_: ObjectRef, a: Int, b: Int, c: Int) throws -> Int in
            if a < 0 { throw Negative() }
            return a &+ b &+ c
        }
        let o = try cls.createInstance()

        let cases: [(Selector, [Int], Int, Entry)] = [
            ("n0", [], 7, .closureItself), ("n1:", [4], 12, .closureItself), ("n2:b:", [10, 3], 7, .closureItself),
            ("n3:b:c:", [1, 2, 3], 123, .closureItself),
            ("k2:b:", [1, 2], 19, .nonThrowingThunk),
            ("t0", [], 9, .throwingThunk), ("t1:", [4], 5, .throwingThunk), ("t2:b:", [6, 7], 42, .throwingThunk),
            ("t3:b:c:", [1, 2, 3], 6, .throwingThunk),
        ]
        for (sel, args, want, entry) in cases {
            let (context, thunk) = words(cls, sel)
            XCTAssertEqual(thunk == Self.nonThrowing[args.count], entry == .nonThrowingThunk, "\(sel.name): which thunk the slot jumps to")
            // A selector-dropping slot keeps the closure's function in both words.
            XCTAssertEqual(UnsafeRawPointer(context) == thunk, entry == .closureItself, "\(sel.name): a slot straight to the closure")
            let (result, kept) = call(cls, o, sel, args)
            XCTAssertEqual(result, want, "\(sel.name)")
            XCTAssertTrue(kept, "\(sel.name): callee-saved registers")
            XCTAssertEqual(try o.send(sel, arguments: args).intValue, want, "\(sel.name): dynamic send into the slot")
        }
        // A thrown error: the C caller gets 0, its registers back, and the error to read.
        for (sel, args) in [("t1:", [-1]), ("t2:b:", [-1, 2]), ("t3:b:c:", [-1, 2, 3])] as [(Selector, [Int])] {
            sf_clear_last_error()
            let (result, kept) = call(cls, o, sel, args)
            XCTAssertEqual(result, 0, "\(sel.name) threw")
            XCTAssertTrue(kept, "\(sel.name) threw: callee-saved registers")
            XCTAssertNotEqual(sf_last_error(), SF_OK)
            XCTAssertThrowsError(try Runtime.rethrowPending(), "\(sel.name): the error is pending for a Swift sender")
        }
    }
}
