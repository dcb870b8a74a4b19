// Hook order: class and instance chains merged position by position (Aspects'
// __ASPECTS_ARE_BEING_CALLED__, Stinger's testInstanceMethodB), hooks that remove themselves
// after their first call, and listing and removing hooks by identifier.
import TestSupport
import CDynamicRuntime
import Dispatch
import XCTest
@testable import DynamicRuntime

final class HookOrderTests: XCTestCase {
    /// A class whose `value:` logs "original" and returns x + 1.
    private func makeLogged(_ base: String, _ log: Locked<[String]>) throws -> RuntimeClass {
        let cls = try makeClass(base)
        try cls.addMethod("value:") { (_: ObjectRef, x: Int) -> Int in
            log.withLock { $0.append("original") }
            return x + 1
        }
        return cls
    }

    private func note(_ log: Locked<[String]>, _ s: String) -> @Sendable (HookContext) throws -> Void {
        { _ in log.withLock { $0.append(s) } }
    }

    private func taken(_ log: Locked<[String]>) -> [String] {
        log.withLock { l in defer { l = [] }; return l }
    }

    func testClassAndInstanceHooksRunPositionByPosition() throws {
        let log = Locked<[String]>([])
        let cls = try makeLogged("HookOrderMerge", log)
        let o1 = try cls.createInstance()
        let o2 = try cls.createInstance()
        // The object's hooks first, the class's second: the order does not depend on that.
        let tokens = [
            try o1.hook("value:", .before, note(log, "instance-before")),
            try o1.hook("value:", .after, note(log, "instance-after")),
            try cls.hook("value:", .before, note(log, "class-before")),
            try cls.hook("value:", .after, note(log, "class-after")),
        ]
        XCTAssertEqual(try o1.send("value:", 1) as Int, 2)
        XCTAssertEqual(taken(log), ["class-before", "instance-before", "original", "class-after", "instance-after"])
        XCTAssertEqual(try o2.send("value:", 1) as Int, 2)
        XCTAssertEqual(taken(log), ["class-before", "original", "class-after"], "other instances run the class's only")

        // Instead hooks: the object's (the more specific one), then the class's (newest first),
        // then the original.
        let c1 = try cls.hook("value:", .instead) { ctx in log.withLock { $0.append("class-instead-1") }; try ctx.proceed() }
        let c2 = try cls.hook("value:", .instead) { ctx in log.withLock { $0.append("class-instead-2") }; try ctx.proceed() }
        let i1 = try o1.hook("value:", .instead) { ctx in
            log.withLock { $0.append("instance-instead") }
            try ctx.proceed()
            try ctx.setReturnValue(try ctx.returnValue(as: Int.self) * 100)
        }
        XCTAssertEqual(try o1.send("value:", 1) as Int, 200)
        XCTAssertEqual(taken(log), ["class-before", "instance-before", "instance-instead", "class-instead-2",
                                    "class-instead-1", "original", "class-after", "instance-after"])
        XCTAssertEqual(try o2.send("value:", 1) as Int, 2)
        XCTAssertEqual(taken(log), ["class-before", "class-instead-2", "class-instead-1", "original", "class-after"])
        for t in tokens + [c1, c2, i1] { XCTAssertTrue(t.remove()) }
        XCTAssertEqual(try o1.send("value:", 1) as Int, 2)
        XCTAssertEqual(taken(log), ["original"])
        XCTAssertEqual(o1.runtimeClass, cls)
    }

    func testAnInstanceInsteadHookThatDropsTheCallStillRunsTheClassBeforeAndAfterHooks() throws {
        let log = Locked<[String]>([])
        let cls = try makeLogged("HookOrderDrop", log)
        let o1 = try cls.createInstance()
        let o2 = try cls.createInstance()
        let before = try cls.hook("value:", .before, note(log, "class-before"))
        let after = try cls.hook("value:", .after) { ctx in
            let r = try ctx.returnValue(as: Int.self)
            log.withLock { $0.append("class-after \(r)") }
        }
        let drop = try o2.hook("value:", .instead) { ctx in
            log.withLock { $0.append("o2-drops") }
            try ctx.setReturnValue(-7)
        }
        XCTAssertEqual(try o2.send("value:", 1) as Int, -7)
        XCTAssertEqual(taken(log), ["class-before", "o2-drops", "class-after -7"])
        XCTAssertEqual(try o1.send("value:", 1) as Int, 2)
        XCTAssertEqual(taken(log), ["class-before", "original", "class-after 2"])
        // A class hook added while the object's hook is in place merges too.
        let late = try cls.hook("value:", .before, note(log, "late-class-before"))
        XCTAssertEqual(try o2.send("value:", 1) as Int, -7)
        XCTAssertEqual(taken(log), ["class-before", "late-class-before", "o2-drops", "class-after -7"])
        // The class's hooks go: the object's own still runs, alone.
        [before, after, late].forEach { $0.remove() }
        XCTAssertEqual(try o2.send("value:", 1) as Int, -7)
        XCTAssertEqual(taken(log), ["o2-drops"])
        drop.remove()
        XCTAssertEqual(try o2.send("value:", 1) as Int, 2)
        XCTAssertEqual(taken(log), ["original"])
    }

    func testAnInheritedClassHookMergesWithTheInstanceChainOfASubclassObject() throws {
        let log = Locked<[String]>([])
        let base = try makeLogged("HookOrderBase", log)
        let sub = try makeClass("HookOrderSub", superclass: base)
        let s = try sub.createInstance()
        let tb = try base.hook("value:", .before, note(log, "base-before"))
        let ti = try s.hook("value:", .before, note(log, "instance-before"))
        let ta = try base.hook("value:", .after, note(log, "base-after"))
        XCTAssertEqual(try s.send("value:", 1) as Int, 2)
        XCTAssertEqual(taken(log), ["base-before", "instance-before", "original", "base-after"])
        [tb, ti, ta].forEach { $0.remove() }
    }

    // MARK: - Automatic removal

    func testAHookThatRemovesItselfAfterItsFirstCall() throws {
        let log = Locked<[String]>([])
        let cls = try makeLogged("HookOrderOnce", log)
        let o = try cls.createInstance()
        let original = cls.ownMethod(for: "value:")!.implementation
        let tc = try cls.hook("value:", .after, options: .removeAfterFirstCall, note(log, "class-once"))
        let to = try o.hook("value:", .before, options: .removeAfterFirstCall, note(log, "object-once"))
        XCTAssertEqual(cls.hooks(for: "value:").map(\.removesAfterFirstCall), [true])
        XCTAssertEqual(try o.send("value:", 1) as Int, 2)
        XCTAssertEqual(taken(log), ["object-once", "original", "class-once"])
        XCTAssertFalse(tc.isActive)
        XCTAssertFalse(to.isActive)
        XCTAssertFalse(tc.remove(), "already gone")
        XCTAssertEqual(try o.send("value:", 1) as Int, 2)
        XCTAssertEqual(taken(log), ["original"])
        XCTAssertEqual(cls.hooks(), [])
        XCTAssertEqual(o.hooks(), [])
        XCTAssertEqual(cls.ownMethod(for: "value:")!.implementation, original, "restored exactly")
        XCTAssertEqual(o.runtimeClass, cls)

        // A one-shot instead hook that someone else already ran lets later calls through.
        let drop = try cls.hook("value:", .instead, options: .removeAfterFirstCall) { ctx in
            log.withLock { $0.append("dropped once") }
            try ctx.setReturnValue(0)
        }
        XCTAssertEqual(try o.send("value:", 1) as Int, 0)
        XCTAssertEqual(try o.send("value:", 1) as Int, 2)
        XCTAssertEqual(taken(log), ["dropped once", "original"])
        XCTAssertFalse(drop.isActive)
    }

    func testOfConcurrentFirstCallsExactlyOneRunsAOneShotHook() throws {
        let cls = try makeClass("HookOrderOnceThreads")
        try cls.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        let obj = try cls.createInstance()
        for _ in 0..<20 {
            let runs = Locked(0)
            let token = try cls.hook("value:", .before, options: .removeAfterFirstCall) { _ in runs.withLock { $0 += 1 } }
            nonisolated(unsafe) let raw = obj.raw
            DispatchQueue.concurrentPerform(iterations: 8) { i in
                for _ in 0..<10 { XCTAssertEqual(try? ObjectRef(raw).send("value:", i) as Int, i + 1) }
            }
            XCTAssertEqual(runs.withLock { $0 }, 1)
            XCTAssertFalse(token.isActive)
        }
        Runtime.state.collectGarbage()
    }

    func testAOneShotHookFromTheCAPI() throws {
        let cls = try makeClass("HookOrderOnceC")
        try cls.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        let obj = try cls.createInstance()
        let flags = sf_hook_position(SF_HOOK_BEFORE.rawValue | SF_HOOK_AUTOMATIC_REMOVAL.rawValue)
        let calls = Locked(0)
        let box = Unmanaged.passRetained(calls)
        defer { box.release() }
        let fn: sf_hook_fn = { _, ctx in
            Unmanaged<Locked<Int>>.fromOpaque(ctx!).takeUnretainedValue().withLock { $0 += 1 }
            return SF_OK
        }
        let token = sf_class_hookMethod(cls.raw, Selector("value:").raw, flags, nil, fn, box.toOpaque())
        XCTAssertNotEqual(token, 0, String(cString: sf_last_error_message()))
        XCTAssertTrue(sf_hook_isActive(token))
        XCTAssertEqual(cls.hooks().map(\.identifier), [HookIdentifier(rawValue: token)])
        XCTAssertEqual(try obj.send("value:", 1) as Int, 2)
        XCTAssertEqual(try obj.send("value:", 1) as Int, 2)
        XCTAssertEqual(calls.withLock { $0 }, 1)
        XCTAssertFalse(sf_hook_isActive(token))
        XCTAssertEqual(sf_hook_remove(token), SF_ERR_INVALID_ARGUMENT, "the token went with the hook")
        // An unknown option bit is refused with a clear error.
        XCTAssertEqual(sf_class_hookMethod(cls.raw, Selector("value:").raw, sf_hook_position(0x200), nil, fn, nil), 0)
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("position"))
    }

    // MARK: - Listing and removing by identifier

    func testListingAndRemovingHooksByIdentifier() throws {
        let log = Locked<[String]>([])
        let cls = try makeLogged("HookOrderList", log)
        try cls.addMethod("other") { (_: ObjectRef) in }
        let o = try cls.createInstance()
        let other = try cls.createInstance()
        let a = try cls.hook("value:", .after, note(log, "a"))
        let b = try cls.hook("value:", .before, note(log, "b"))
        let c = try cls.hook("value:", .instead) { ctx in try ctx.proceed() }
        let d = try cls.hook("other", .before, note(log, "d"))
        let mine = try o.hook("value:", .before, note(log, "mine"))
        XCTAssertEqual(cls.hooks(for: "value:").map(\.identifier), [b, c, a].map(\.identifier), "in the order they run")
        XCTAssertEqual(cls.hooks(for: "value:").map(\.position), [.before, .instead, .after])
        XCTAssertEqual(cls.hooks().map(\.selector), ["other", "value:", "value:", "value:"])
        XCTAssertEqual(cls.hooks(for: "nothing"), [])
        XCTAssertEqual(o.hooks().map(\.identifier), [mine.identifier], "the object's own, not its class's")
        XCTAssertEqual(other.hooks(), [])
        XCTAssertEqual(cls.metaclass.hooks(), [])

        XCTAssertFalse(cls.removeHook(mine.identifier), "an object's hook is not the class's")
        XCTAssertFalse(other.removeHook(mine.identifier), "nor another object's")
        XCTAssertTrue(cls.removeHook(b.identifier))
        XCTAssertFalse(cls.removeHook(b.identifier), "removed once")
        XCTAssertFalse(b.isActive)
        XCTAssertFalse(b.remove())
        XCTAssertTrue(o.removeHook(mine.identifier))
        XCTAssertEqual(o.hooks(), [])
        XCTAssertEqual(o.runtimeClass, cls)
        XCTAssertEqual(try o.send("value:", 1) as Int, 2)
        XCTAssertEqual(taken(log), ["original", "a"])
        XCTAssertFalse(cls.removeHook(HookIdentifier(rawValue: 0)))
        XCTAssertTrue(c.remove() && a.remove() && d.remove())
        XCTAssertEqual(cls.hooks(), [])
    }
}
