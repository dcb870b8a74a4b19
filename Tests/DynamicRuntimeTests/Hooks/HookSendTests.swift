// A typed send to a hooked method reaches the hook from its method record and runs
// the chain over its argument words (no trampoline, no second read section); an instead-only
// chain calls its first hook directly; the original's kind (plain function, `Int` body, word
// body, vector body) is decided when it is published. Each chain shape and each kind of
// original is checked against the same call made from C through the IMP (the slot's entry).
import TestSupport
import CDynamicRuntime
import Foundation
import Synchronization
import XCTest
@testable import DynamicRuntime

final class HookSendTests: XCTestCase {
    override func setUp() {
        super.setUp()
        sf_tramp_set_enabled(1)
    }

    private let sel: Selector = "mix:with:"
    /// Classes whose IMPs other classes borrow without their owners.
    private var kept: [RuntimeClass] = []
    private typealias F2 = @convention(c) (sf_id?, sf_sel?, Int, Int) -> Int

    /// The kinds of original a hook wraps; each computes `a * 3 + b` and counts its calls.
    private enum Kind: CaseIterable { case function, intBody, wordBody, vectorBody }

    private func install(_ kind: Kind, on cls: RuntimeClass, _ runs: Locked<Int>, offset: Int = 0,
                         replacing: Bool = false) throws {
        switch kind {
        case .function:
            // A closure's slot installed without its owner: to the hook, a plain C function.
            let owner = try makeClass("HookSendFunctionOwner")
            let m = try owner.addMethod(sel) { (_: ObjectRef, a: Int, b: Int) in
                runs.withLock { $0 += 1 }
                return a &* 3 &+ b &+ offset
            }
            let imp = IMP(m.implementation.pointer)
            kept.append(owner)
            if replacing { try cls.replaceMethod(sel, implementation: imp, types: "q@:qq") } else {
                try cls.addMethod(sel, implementation: imp, types: "q@:qq")
            }
        case .intBody:
            let body: @Sendable (ObjectRef, Int, Int) throws -> Int = { _, a, b in
                runs.withLock { $0 += 1 }
                return a &* 3 &+ b &+ offset
            }
            if replacing { try cls.replaceMethod(sel) { (o: ObjectRef, a: Int, b: Int) in try body(o, a, b) } } else {
                try cls.addMethod(sel) { (o: ObjectRef, a: Int, b: Int) in try body(o, a, b) }
            }
            if !replacing { XCTAssertTrue(cls.ownMethod(for: sel)!.implementation.owner?.hasDirectIntBody ?? false) }
        case .wordBody:
            // `Int64`, not `Int`: the generic overload's word body, no `Int` body.
            let body: @Sendable (ObjectRef, Int64, Int64) throws -> Int64 = { _, a, b in
                runs.withLock { $0 += 1 }
                return a &* 3 &+ b &+ Int64(offset)
            }
            if replacing { try cls.replaceMethod(sel, body) } else { try cls.addMethod(sel, body) }
            let owner = cls.ownMethod(for: sel)!.implementation.owner
            if !replacing { XCTAssertTrue(owner?.hasWordBody == true && owner?.hasDirectIntBody == false, "a word body only") }
        case .vectorBody:
            let raw: @Sendable (UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws -> Void = { ret, args in
                runs.withLock { $0 += 1 }
                ret.storeBytes(of: args[2]!.load(as: Int.self) &* 3 &+ args[3]!.load(as: Int.self) &+ offset, as: Int.self)
            }
            if replacing { try cls.replaceMethod(sel, implementation: try IMP(types: "q@:qq", rawBody: raw), types: "q@:qq") } else {
                try cls.addMethod(sel, types: "q@:qq", rawBody: raw)
            }
        }
    }

    /// The same message sent typed and from C through the method's IMP.
    private func sendBoth(_ o: Object, _ a: Int, _ b: Int, _ what: String,
                          file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let typed: Int = try o.send(sel, a, b)
        let imp = unsafeBitCast(sf_msg_lookup(o.raw, sel.raw)!, to: F2.self)
        let fromC = imp(o.raw, sel.raw, a, b)
        XCTAssertEqual(typed, fromC, "\(what): typed send and C call disagree", file: file, line: line)
        return typed
    }

    /// Every chain shape over every kind of original: the order hooks run in, what they return,
    /// how often the original runs, and that removing the hooks restores the plain call.
    func testEveryChainShapeOverEveryKindOfOriginal() throws {
        for kind in Kind.allCases {
            let cls = try makeClass("HookSendShapes")
            let runs = Locked(0)
            try install(kind, on: cls, runs)
            let o = try cls.createInstance()
            let log = Locked<[String]>([])
            func expect(_ shape: String, _ a: Int, _ want: Int, runs wantRuns: Int, log wantLog: [String]) throws {
                runs.withLock { $0 = 0 }
                log.withLock { $0 = [] }
                XCTAssertEqual(try sendBoth(o, a, 1, "\(kind) \(shape)"), want, "\(kind) \(shape)")
                XCTAssertEqual(runs.current, 2 * wantRuns, "\(kind) \(shape): original runs (two sends)")
                XCTAssertEqual(log.current, wantLog + wantLog, "\(kind) \(shape): hook order (two sends)")
            }
            try expect("plain", 5, 16, runs: 1, log: [])

            // One instead hook (the path a typed send takes without the general loop).
            let first = try cls.hook(sel, .instead) { ctx in
                log.withLock { $0.append("first") }
                try ctx.proceed()
                try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 1000)
            }
            XCTAssertEqual(first.hook.entry, .integerRegisters(4))
            try expect("one instead", 5, 1016, runs: 1, log: ["first"])

            // Two: the newest runs first, its proceed() runs the older, whose runs the original.
            let second = try cls.hook(sel, .instead) { ctx in
                log.withLock { $0.append("second") }
                try ctx.setArgument(7, at: 0)
                try ctx.proceed()
            }
            try expect("two instead", 5, 1022, runs: 1, log: ["second", "first"])

            // Around them: before and after hooks.
            let before = try cls.hook(sel, .before) { _ in log.withLock { $0.append("before") } }
            let after = try cls.hook(sel, .after) { ctx in
                log.withLock { $0.append("after \(try! ctx.returnValue(as: Int.self))") }
            }
            try expect("before/instead/after", 5, 1022, runs: 1, log: ["before", "second", "first", "after 1022"])
            before.remove()
            after.remove()
            second.remove()
            try expect("one instead again", 5, 1016, runs: 1, log: ["first"])
            first.remove()

            // An instead hook that does not proceed, and one that proceeds twice.
            let skip = try cls.hook(sel, .instead) { ctx in
                log.withLock { $0.append("skip") }
                XCTAssertFalse(ctx.didProceed)
                try ctx.setReturnValue(-7)
            }
            try expect("not proceeding", 5, -7, runs: 0, log: ["skip"])
            skip.remove()
            let twice = try cls.hook(sel, .instead) { ctx in
                log.withLock { $0.append("twice") }
                try ctx.proceed()
                let r1 = try ctx.returnValue(as: Int.self)
                try ctx.setArgument(10, at: 0)
                try ctx.proceed()
                try ctx.setReturnValue(r1 * 100 + (try ctx.returnValue(as: Int.self)))
            }
            try expect("proceeding twice", 5, 16 * 100 + 31, runs: 2, log: ["twice"])
            twice.remove()

            // A one-shot instead hook: the first send runs it, every later one the original.
            let once = try cls.hook(sel, .instead, options: .removeAfterFirstCall) { ctx in
                log.withLock { $0.append("once") }
                try ctx.proceed()
                try ctx.setReturnValue(-1)
            }
            XCTAssertEqual(try o.send(sel, 5, 1) as Int, -1, "\(kind): the one-shot hook")
            XCTAssertEqual(try o.send(sel, 5, 1) as Int, 16, "\(kind): the one-shot hook is gone")
            XCTAssertFalse(once.isActive)
            XCTAssertEqual(log.current.filter { $0 == "once" }.count, 1, "\(kind)")
            try expect("unhooked", 6, 19, runs: 1, log: [])
        }
    }

    /// The hook wraps whatever the method is replaced with, of any kind, and keeps it once removed.
    func testReplacingTheOriginalUnderAHook() throws {
        for old in Kind.allCases {
            for new in Kind.allCases {
                let cls = try makeClass("HookSendReplace")
                let oldRuns = Locked(0), newRuns = Locked(0)
                try install(old, on: cls, oldRuns)
                let o = try cls.createInstance()
                let token = try cls.hook(sel, .instead) { ctx in
                    try ctx.proceed()
                    try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 1000)
                }
                XCTAssertEqual(try sendBoth(o, 5, 1, "\(old)"), 1016)
                try install(new, on: cls, newRuns, offset: 50, replacing: true)
                XCTAssertEqual(try sendBoth(o, 5, 1, "\(old) -> \(new)"), 1066, "\(old) -> \(new): the hook wraps the new original")
                XCTAssertEqual(oldRuns.current, 2)
                XCTAssertEqual(newRuns.current, 2)
                token.remove()
                XCTAssertEqual(try sendBoth(o, 5, 1, "\(old) -> \(new), unhooked"), 66)
            }
        }
    }

    /// Errors keep their type and reach typed senders and C callers (zero and sf_last_error):
    /// a hook's own error, a Swift error it throws, and an error thrown by the original.
    func testErrorsFromHooksAndOriginals() throws {
        for kind in Kind.allCases {
            let cls = try makeClass("HookSendErrors")
            try install(kind, on: cls, Locked(0))
            let o = try cls.createInstance()
            let fail = Locked<Int>(0)
            let token = try cls.hook(sel, .instead) { ctx in
                switch fail.current {
                case 1: throw RuntimeError.invalidArgument(.init(expected: "a test", actual: "a hook error"))
                case 2: throw HookSendTestError.boom
                default: try ctx.proceed()
                }
            }
            fail.withLock { $0 = 1 }
            let e1 = thrownError { try o.send(sel, 1, 2) as Int }
            XCTAssertEqual(e1, .invalidArgument(.init(expected: "a test", actual: "a hook error")), "\(kind)")
            XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT, "\(kind): recorded for C")
            fail.withLock { $0 = 2 }
            guard case let .implementationFailed(info)? = thrownError({ try o.send(sel, 1, 2) as Int }) else {
                return XCTFail("\(kind): a Swift error is wrapped naming the method")
            }
            XCTAssertEqual(info.className, cls.name)
            XCTAssertEqual(info.selector, sel.name)
            XCTAssertTrue(info.underlying is HookSendTestError, "\(kind): the hook's own error kept")
            let imp = unsafeBitCast(sf_msg_lookup(o.raw, sel.raw)!, to: F2.self)
            XCTAssertEqual(imp(o.raw, sel.raw, 1, 2), 0, "\(kind): C callers get zero")
            Runtime.dropPending()
            fail.withLock { $0 = 0 }
            XCTAssertEqual(try o.send(sel, 1, 2) as Int, 5, "\(kind): the next call is clean")
            token.remove()
        }
    }

    /// An original closure that throws, under an instead hook: the sender gets its error (the
    /// class and selector named), C callers zero; nothing is left behind for the next call.
    func testAnOriginalThatThrows() throws {
        let bodies: [(String, (RuntimeClass, Selector, Locked<Bool>) throws -> Void)] = [
            ("intBody", { cls, sel, boom in
                try cls.addMethod(sel) { (_: ObjectRef, a: Int, b: Int) in
                    if boom.current { throw HookSendTestError.boom }
                    return a &* 3 &+ b
                }
                XCTAssertTrue(cls.ownMethod(for: sel)!.implementation.owner?.hasDirectIntBody ?? false)
            }),
            ("vectorBody", { cls, sel, boom in
                try cls.addMethod(sel, types: "q@:qq", rawBody: { ret, args in
                    if boom.current { throw HookSendTestError.boom }
                    ret.storeBytes(of: args[2]!.load(as: Int.self) &* 3 &+ args[3]!.load(as: Int.self), as: Int.self)
                })
            }),
        ]
        for (name, add) in bodies {
            let cls = try makeClass("HookSendOriginalThrows")
            let boom = Locked(false)
            try add(cls, sel, boom)
            let o = try cls.createInstance()
            let seen = Locked<[Int]>([])
            let token = try cls.hook(sel, .instead) { ctx in
                defer { seen.withLock { $0.append((try? ctx.returnValue(as: Int.self)) ?? -1) } }
                try ctx.proceed()
            }
            boom.withLock { $0 = true }
            guard case let .implementationFailed(info)? = thrownError({ try o.send(sel, 1, 2) as Int }) else {
                return XCTFail("\(name): the original's error reaches the sender")
            }
            XCTAssertEqual(info.className, cls.name, name)
            XCTAssertEqual(info.selector, sel.name, name)
            XCTAssertTrue(info.underlying is HookSendTestError, name)
            XCTAssertEqual(seen.current, [0], "\(name): the failed original leaves zero")
            let imp = unsafeBitCast(sf_msg_lookup(o.raw, sel.raw)!, to: F2.self)
            XCTAssertEqual(imp(o.raw, sel.raw, 1, 2), 0, name)
            Runtime.dropPending()
            boom.withLock { $0 = false }
            XCTAssertEqual(try o.send(sel, 1, 2) as Int, 5, name)
            token.remove()
        }
    }

    /// A per-object hook (whose original is the visible class's method, of every kind) and a
    /// class hook still run through the typed send's branch, and follow a replaced original.
    func testPerObjectAndInheritedHooks() throws {
        for kind in Kind.allCases {
            let base = try makeClass("HookSendBase")
            try install(kind, on: base, Locked(0))
            let sub = try makeClass("HookSendSub", superclass: base)
            let o = try sub.createInstance(), other = try sub.createInstance()
            let own = try o.hook(sel, .instead) { ctx in
                try ctx.proceed()
                try ctx.setReturnValue(try ctx.returnValue(as: Int.self) * 2)
            }
            XCTAssertEqual(try sendBoth(o, 5, 1, "\(kind) own"), 32, "\(kind)")
            XCTAssertEqual(try sendBoth(other, 5, 1, "\(kind) other"), 16, "\(kind)")
            let classHook = try sub.hook(sel, .instead) { ctx in
                try ctx.proceed()
                try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 1000)
            }
            XCTAssertEqual(try sendBoth(o, 5, 1, "\(kind) both"), 2032, "\(kind): the class's hook inside the object's")
            XCTAssertEqual(try sendBoth(other, 5, 1, "\(kind) class"), 1016, "\(kind)")
            classHook.remove()
            // The visible class's method replaced (with each kind) under the object's hook.
            for new in Kind.allCases {
                try install(new, on: base, Locked(0), offset: 50, replacing: true)
                XCTAssertEqual(try sendBoth(o, 5, 1, "\(kind) -> \(new)"), 132, "\(kind) -> \(new): the new original")
                try install(kind, on: base, Locked(0), replacing: true)
            }
            XCTAssertEqual(try sendBoth(o, 5, 1, "\(kind) own only"), 32, "\(kind)")
            own.remove()
            XCTAssertEqual(try sendBoth(o, 5, 1, "\(kind) none"), 16, "\(kind)")
        }
    }
}

private enum HookSendTestError: Error { case boom }
