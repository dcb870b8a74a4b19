// Acceptance tests for issue 3: hooking methods by name — positions, order, tokens, dropping
// and keeping calls, class/inherited/per-instance hooks, exact restoration, super calls,
// replaceMethod and observers.
import TestSupport
import CShims
import XCTest
@testable import DynamicRuntime

final class HookBehaviourTests: XCTestCase {
    var objectBaseline = 0

    override func setUp() {
        super.setUp()
        fwdCollect()
        objectBaseline = Runtime.liveObjectCount
    }

    /// A class with `add:to:` (counting its calls) and a few other shapes.
    func makeCalc(_ base: String = "HookCalc", calls: Locked<Int> = Locked(0)) throws -> RuntimeClass {
        let cls = try makeClass(base, ivars: [("tag", .int64)])
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in
            calls.withLock { $0 += 1 }
            return a + b
        }
        try cls.addMethod("scale:") { (_: ObjectRef, x: Double) in x * 2 }
        try cls.addMethod("frame") { (_: ObjectRef) in FwdRect(origin: Point(x: 1, y: 2), size: FwdSize(width: 3, height: 4)) }
        try cls.addMethod("make") { (me: ObjectRef) -> Object? in try me.runtimeClass!.createInstance() }
        try cls.addMethod("tag") { (me: ObjectRef) -> Int in try me.value(ofIvar: "tag", as: Int.self) }
        return cls
    }

    func imp(_ cls: RuntimeClass, _ sel: Selector) -> IMP? { cls.ownMethod(for: sel)?.implementation }

    // MARK: - Positions and the context

    func testBeforeInsteadAndAfterSeeAndChangeTheCall() throws {
        let calls = Locked(0)
        let cls = try makeCalc(calls: calls)
        let original = imp(cls, "add:to:")!
        let o = try cls.createInstance()
        nonisolated(unsafe) var log: [String] = []
        let before = try cls.hook("add:to:", .before) { ctx in
            XCTAssertEqual(ctx.target.raw, o.raw)
            XCTAssertEqual(ctx.selector, Selector("add:to:"))
            XCTAssertEqual(ctx.signature.encoding, "q@:qq")
            XCTAssertEqual(ctx.originalImplementation, original)
            XCTAssertFalse(ctx.didProceed)
            XCTAssertEqual(try ctx.returnValue(as: Int.self), 0, "nothing has run yet")
            let a: Int = try ctx.argument(at: 0)
            log.append("before \(a) \(try ctx.argument(at: 1, as: Int.self))")
            try ctx.setArgument(a * 10, at: 0)
        }
        let instead = try cls.hook("add:to:", .instead) { ctx in
            log.append("instead \(try ctx.argument(at: 0, as: Int.self))")
            try ctx.proceed()
            XCTAssertTrue(ctx.didProceed)
            let r: Int = try ctx.returnValue()
            log.append("instead got \(r)")
            try ctx.setReturnValue(r + 1)
        }
        nonisolated(unsafe) var afterArguments: [[Int?]] = []
        let after = try cls.hook("add:to:", .after) { ctx in
            XCTAssertTrue(ctx.didProceed)
            afterArguments.append(ctx.argumentValues.map { $0.intValue })
            let r: Int = try ctx.returnValue()
            log.append("after \(r)")
            try ctx.setReturnValue(r * 2)
        }
        XCTAssertEqual([before.position, instead.position, after.position], [.before, .instead, .after])
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, ((10 + 2) + 1) * 2)
        XCTAssertEqual(log, ["before 1 2", "instead 10", "instead got 12", "after 13"])
        XCTAssertEqual(afterArguments, [[10, 2]], "after-hooks see the arguments as the before-hook left them")
        XCTAssertEqual(calls.current, 1)
        // Dynamic sends go through the same trampoline.
        log = []
        XCTAssertEqual(try o.send("add:to:", 1, 2).intValue, 26)
        XCTAssertEqual(log.count, 4)

        // Each token removes its own hook.
        XCTAssertTrue(instead.isActive)
        XCTAssertTrue(instead.remove())
        XCTAssertFalse(instead.isActive)
        XCTAssertFalse(instead.remove(), "removing twice is harmless")
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, (10 + 2) * 2)
        XCTAssertTrue(before.remove())
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3 * 2)
        XCTAssertTrue(after.remove())
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(imp(cls, "add:to:"), original)
    }

    func testSeveralHooksRunInADefinedOrder() throws {
        let cls = try makeCalc()
        let o = try cls.createInstance()
        nonisolated(unsafe) var log: [String] = []
        var tokens: [String: HookToken] = [:]
        for name in ["b1", "b2", "b3"] {
            tokens[name] = try cls.hook("add:to:", .before) { _ in log.append(name) }
        }
        for name in ["i1", "i2", "i3"] {
            tokens[name] = try cls.hook("add:to:", .instead) { ctx in
                log.append("\(name)>")
                try ctx.proceed()
                log.append("<\(name)")
            }
        }
        for name in ["a1", "a2", "a3"] {
            tokens[name] = try cls.hook("add:to:", .after) { _ in log.append(name) }
        }
        try cls.addMethod("unrelated") { (_: ObjectRef) -> Int in 0 }
        let original = try cls.hook("add:to:", .instead) { ctx in
            // Newest instead-hook: runs first and sees the chain below it.
            log.append("newest>")
            try ctx.proceed()
            log.append("<newest")
        }
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(log, ["b1", "b2", "b3", "newest>", "i3>", "i2>", "i1>", "<i1", "<i2", "<i3", "<newest", "a1", "a2", "a3"])

        // Removing some leaves the rest working, in the same order.
        tokens["b2"]!.remove()
        tokens["i2"]!.remove()
        tokens["a1"]!.remove()
        original.remove()
        log = []
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(log, ["b1", "b3", "i3>", "i1>", "<i1", "<i3", "a2", "a3"])

        // A hook added after removals goes to its place in the order.
        tokens["b4"] = try cls.hook("add:to:", .before) { _ in log.append("b4") }
        log = []
        _ = try o.send("add:to:", 1, 2) as Int
        XCTAssertEqual(log, ["b1", "b3", "b4", "i3>", "i1>", "<i1", "<i3", "a2", "a3"])
        for (_, t) in tokens { t.remove() }
        log = []
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(log, [])
    }

    func testInvokeOriginalSkipsTheRemainingInsteadHooks() throws {
        let cls = try makeCalc()
        let o = try cls.createInstance()
        nonisolated(unsafe) var log: [String] = []
        let older = try cls.hook("add:to:", .instead) { ctx in
            log.append("older")
            try ctx.proceed()
        }
        let newer = try cls.hook("add:to:", .instead) { ctx in
            log.append("newer")
            try ctx.invokeOriginal()
        }
        XCTAssertEqual(try o.send("add:to:", 2, 2) as Int, 4)
        XCTAssertEqual(log, ["newer"])
        older.remove()
        newer.remove()
    }

    // MARK: - Dropping and keeping calls

    func testInsteadWithoutProceedDropsTheCall() throws {
        let calls = Locked(0)
        let cls = try makeCalc(calls: calls)
        let o = try cls.createInstance()
        nonisolated(unsafe) var afterSaw: [Int] = []
        let drop = try cls.hook("add:to:", .instead) { _ in }
        let after = try cls.hook("add:to:", .after) { ctx in
            XCTAssertFalse(ctx.didProceed)
            afterSaw.append(try ctx.returnValue(as: Int.self))
        }
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 0, "a dropped call answers zero")
        XCTAssertEqual(calls.current, 0)
        XCTAssertEqual(afterSaw, [0], "after-hooks still run")
        drop.remove()
        let answer = try cls.hook("add:to:", .instead) { ctx in try ctx.setReturnValue(-5) }
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, -5, "or the value the hook set")
        XCTAssertEqual(calls.current, 0)
        XCTAssertEqual(afterSaw, [0, -5])
        answer.remove()
        after.remove()

        // Other return shapes answer their zero.
        var tokens: [HookToken] = []
        for sel in ["scale:", "frame", "make"] as [Selector] {
            tokens.append(try cls.hook(sel, .instead) { _ in })
        }
        XCTAssertEqual(try o.send("scale:", 3.0) as Double, 0)
        XCTAssertEqual(try o.send("frame") as FwdRect, FwdRect(origin: Point(x: 0, y: 0), size: FwdSize(width: 0, height: 0)))
        XCTAssertNil(try o.send("make") as Object?)
        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 1)
        tokens.forEach { $0.remove() }
        XCTAssertEqual(try o.send("scale:", 3.0) as Double, 6)

        // An object set by the hook reaches the caller with one reference of its own.
        let other = try cls.createInstance()
        let give = try cls.hook("make", .instead) { ctx in try ctx.setReturnValue(Optional(other)) }
        do {
            let r: Object? = try o.send("make")
            XCTAssertEqual(r?.raw, other.raw)
            XCTAssertEqual(other.retainCount, 2)
        }
        XCTAssertEqual(other.retainCount, 1)
        // Replacing the original's result after proceeding releases the original's object.
        give.remove()
        let swap = try cls.hook("make", .instead) { ctx in
            try ctx.proceed()
            try ctx.setReturnValue(Optional(other))
        }
        do {
            let r: Object? = try o.send("make")
            XCTAssertEqual(r?.raw, other.raw)
        }
        swap.remove()
        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 2, "the dropped result was released")
    }

    func testKeepingTheCallForReplay() throws {
        let calls = Locked(0)
        let cls = try makeClass("HookKeep", ivars: [("tag", .int64)])
        let received = Locked<[String]>([])
        try cls.addMethod("note:value:") { (_: ObjectRef, obj: ObjectRef, v: Int) -> Int in
            calls.withLock { $0 += 1 }
            let tag = try obj.value(ofIvar: "tag", as: Int.self)
            received.withLock { $0.append("\(tag):\(v)") }
            return tag + v
        }
        let o = try cls.createInstance()
        nonisolated(unsafe) var kept: [Invocation] = []
        let hookRuns = Locked(0)
        let token = try cls.hook("note:value:", .instead) { ctx in
            hookRuns.withLock { $0 += 1 }
            kept.append(ctx.makeInvocation())
        }
        let weakArg: WeakReference
        do {
            let arg = try cls.createInstance()
            try arg.setValue(7, forIvar: "tag")
            weakArg = WeakReference(arg)
            XCTAssertEqual(try o.send("note:value:", arg.ref, 1) as Int, 0)
            XCTAssertEqual(try o.send("note:value:", arg.ref, 2) as Int, 0)
        }
        XCTAssertNotNil(weakArg.object, "the kept record retains the object argument")
        XCTAssertEqual(calls.current, 0)
        XCTAssertEqual(kept.count, 2)
        XCTAssertTrue(kept.allSatisfy { $0.argumentsRetained })

        // Replay while the hook is still installed: the original runs, not the hook.
        try kept[0].invoke()
        XCTAssertEqual(try kept[0].returnValue(as: Int.self), 8)
        XCTAssertEqual(hookRuns.current, 2)
        token.remove()
        try kept[1].invoke()
        XCTAssertEqual(try kept[1].returnValue(as: Int.self), 9)
        XCTAssertEqual(received.current, ["7:1", "7:2"])
        kept.removeAll()
        XCTAssertNil(weakArg.object, "released with the records")
    }

    func testCaptureIntoReusesOneRecord() throws {
        let cls = try makeClass("HookCapture", ivars: [("tag", .int64)])
        try cls.addMethod("note:value:") { (_: ObjectRef, obj: ObjectRef, v: Int) -> Int in
            try obj.value(ofIvar: "tag", as: Int.self) * 100 + v
        }
        let o = try cls.createInstance()
        nonisolated(unsafe) var record: Invocation?
        nonisolated(unsafe) var identities: Set<ObjectIdentifier> = []
        let token = try cls.hook("note:value:", .instead) { ctx in
            ctx.capture(into: &record)
            identities.insert(ObjectIdentifier(record!.storage))
        }
        let first = try cls.createInstance()
        try first.setValue(1, forIvar: "tag")
        let second = try cls.createInstance()
        try second.setValue(2, forIvar: "tag")
        _ = try o.send("note:value:", first.ref, 5) as Int
        XCTAssertEqual(first.retainCount, 2)
        _ = try o.send("note:value:", second.ref, 6) as Int
        XCTAssertEqual(first.retainCount, 1, "refilling released the previous call's object")
        XCTAssertEqual(second.retainCount, 2)
        _ = try o.send("note:value:", second.ref, 7) as Int
        XCTAssertEqual(identities.count, 1, "one record, reused")
        XCTAssertEqual(second.retainCount, 2)
        token.remove()
        try record!.invoke()
        XCTAssertEqual(try record!.returnValue(as: Int.self), 207)

        // A record someone else still holds is not overwritten.
        let token2 = try cls.hook("note:value:", .instead) { ctx in ctx.capture(into: &record) }
        let held = record!
        _ = try o.send("note:value:", first.ref, 9) as Int
        XCTAssertNotEqual(ObjectIdentifier(held.storage), ObjectIdentifier(record!.storage))
        XCTAssertEqual(try held.argument(at: 1, as: Int.self), 7)
        XCTAssertEqual(try record!.argument(at: 1, as: Int.self), 9)
        token2.remove()
    }

    func testAReplayedRecordFromAHookRunsOnAnotherThread() throws {
        let cls = try makeClass("HookReplayThread", ivars: [("tag", .int64)])
        try cls.addMethod("read:") { (_: ObjectRef, obj: ObjectRef) -> Int in try obj.value(ofIvar: "tag", as: Int.self) }
        let o = try cls.createInstance()
        let holder = Locked<Invocation?>(nil)
        let token = try cls.hook("read:", .instead) { ctx in holder.set(ctx.makeInvocation()) }
        let deallocated = Locked(false)
        do {
            let arg = try cls.createInstance()
            try arg.setValue(31, forIvar: "tag")
            arg.onDeallocate { _ in deallocated.set(true) }
            XCTAssertEqual(try o.send("read:", arg.ref) as Int, 0)
        }
        token.remove()
        XCTAssertFalse(deallocated.current)
        let result = Locked(0)
        let elsewhere = fwdRunOnNewThread {
            var inv = holder.withLock { v -> Invocation? in
                defer { v = nil }
                return v
            }
            try? inv!.invoke()
            result.set((try? inv!.returnValue(as: Int.self)) ?? -1)
            XCTAssertFalse(deallocated.current)
            inv = nil
            XCTAssertTrue(deallocated.current)
        }
        XCTAssertTrue(elsewhere)
        XCTAssertEqual(result.current, 31)
    }

    // MARK: - Where hooks apply

    func testClassMethodHooks() throws {
        let cls = try makeCalc()
        try cls.metaclass.addMethod("make") { (_: ObjectRef) -> Object? in try cls.createInstance() }
        try cls.metaclass.addMethod("version") { (_: ObjectRef) -> Int in 3 }
        let originalClassIMP = imp(cls.metaclass, "version")!
        let originalInstanceIMP = imp(cls, "make")!
        let o = try cls.createInstance()
        nonisolated(unsafe) var log: [String] = []
        let t1 = try cls.hookClassMethod("version", .after) { ctx in
            XCTAssertEqual(ctx.target.raw, sf_class_as_object(cls.raw))
            try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 100)
        }
        let t2 = try cls.hookClassMethod("make", .before) { _ in log.append("+make") }
        XCTAssertEqual(try cls.send("version") as Int, 103)
        do {
            let made: Object? = try cls.send("make")
            XCTAssertEqual(made?.runtimeClass, cls)
            let fromInstance: Object? = try o.send("make")
            XCTAssertEqual(fromInstance?.runtimeClass, cls)
        }
        XCTAssertEqual(log, ["+make"], "the instance method of the same name is untouched")
        XCTAssertEqual(imp(cls, "make"), originalInstanceIMP)
        // Hooking the metaclass directly is the same thing.
        let t3 = try cls.metaclass.hook("version", .before) { _ in log.append("meta") }
        XCTAssertEqual(try cls.send("version") as Int, 103)
        XCTAssertEqual(log, ["+make", "meta"])
        [t1, t2, t3].forEach { $0.remove() }
        XCTAssertEqual(try cls.send("version") as Int, 3)
        XCTAssertEqual(imp(cls.metaclass, "version"), originalClassIMP)
        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 1)
    }

    func testHookingAnInheritedMethodLeavesSuperclassAndSiblingsAlone() throws {
        let base = try makeCalc("HookBase")
        let sub = try makeClass("HookSub", superclass: base)
        let sibling = try makeClass("HookSibling", superclass: base)
        let grandchild = try makeClass("HookGrandchild", superclass: sub)
        let baseIMP = imp(base, "add:to:")!
        let (b, s, sib, g) = (try base.createInstance(), try sub.createInstance(), try sibling.createInstance(), try grandchild.createInstance())
        for o in [b, s, sib, g] { XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3) }  // fill caches first

        nonisolated(unsafe) var seen: [String] = []
        let token = try sub.hook("add:to:", .after) { ctx in
            seen.append(ctx.target.runtimeClass!.name)
            try ctx.setReturnValue(try ctx.returnValue(as: Int.self) * 100)
        }
        XCTAssertEqual(try s.send("add:to:", 1, 2) as Int, 300)
        XCTAssertEqual(try g.send("add:to:", 1, 2) as Int, 300, "subclasses of the hooked class inherit the hook")
        XCTAssertEqual(try b.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(try sib.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(seen, [sub.name, grandchild.name])
        XCTAssertEqual(imp(base, "add:to:"), baseIMP, "the superclass's entry is untouched")
        XCTAssertEqual(fwdIMP(sf_class_getMethodImplementation(sibling.raw, Selector("add:to:").raw)), baseIMP)

        token.remove()
        XCTAssertNil(sub.ownMethod(for: "add:to:"), "the entry made for the hook is gone")
        XCTAssertEqual(fwdIMP(sf_class_getMethodImplementation(sub.raw, Selector("add:to:").raw)), baseIMP)
        XCTAssertEqual(fwdIMP(sf_class_getMethodImplementation(grandchild.raw, Selector("add:to:").raw)), baseIMP)
        XCTAssertEqual(try s.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(try g.send("add:to:", 1, 2) as Int, 3)

        // An inherited hook follows later changes to the superclass's method.
        let t2 = try sub.hook("add:to:", .before) { _ in seen.append("again") }
        try base.replaceMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a - b }
        XCTAssertEqual(try s.send("add:to:", 5, 2) as Int, 3)
        XCTAssertEqual(seen.last, "again")
        t2.remove()
    }

    func testPerInstanceHooksLeaveOtherInstancesAlone() throws {
        let cls = try makeCalc("HookPerInstance")
        let original = imp(cls, "add:to:")!
        let a = try cls.createInstance()
        let b = try cls.createInstance()
        nonisolated(unsafe) var log: [String] = []
        let token = try a.hook("add:to:", .instead) { ctx in
            log.append("a")
            try ctx.proceed()
            try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 1000)
        }
        XCTAssertEqual(try a.send("add:to:", 1, 2) as Int, 1003)
        XCTAssertEqual(try b.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(log, ["a"])
        // The object reports its own class, not the private subclass.
        XCTAssertEqual(a.runtimeClass, cls)
        XCTAssertEqual(sf_object_getClass(a.raw), cls.raw)
        XCTAssertTrue(a.isKind(of: cls))
        XCTAssertEqual(imp(cls, "add:to:"), original, "the class is untouched")
        XCTAssertFalse(RuntimeClass.allClasses.contains { $0.name.contains("#") }, "the private class is not registered by name")

        // A second per-object hook on the same object and a class hook: each runs once.
        let t2 = try a.ref.hook("add:to:", .before) { _ in log.append("a-before") }
        let t3 = try cls.hook("add:to:", .before) { _ in log.append("class") }
        log = []
        XCTAssertEqual(try a.send("add:to:", 1, 2) as Int, 1003)
        XCTAssertEqual(try b.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(log, ["class", "a-before", "a", "class"], "class then instance, position by position")

        token.remove()
        t2.remove()
        t3.remove()
        log = []
        XCTAssertEqual(try a.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(log, [])
        XCTAssertEqual(fwdIMP(sf_msg_lookup(a.raw, Selector("add:to:").raw)), original, "lookup on the object finds the original again")
        XCTAssertEqual(a.runtimeClass, cls)

        // Hooking again after everything was removed works.
        let t4 = try a.hook("add:to:", .after) { ctx in try ctx.setReturnValue(-1) }
        XCTAssertEqual(try a.send("add:to:", 1, 2) as Int, -1)
        XCTAssertEqual(try b.send("add:to:", 1, 2) as Int, 3)
        t4.remove()

        // Classes are not instances.
        XCTAssertTrue(thrownError { try ObjectRef(sf_class_as_object(cls.raw)).hook("add:to:") { _ in } }?.isHookFailed ?? false)
        XCTAssertTrue(thrownError { try ObjectRef.nil.hook("add:to:") { _ in } }?.isHookFailed ?? false)
    }

    func testPerInstanceHookedObjectsCanBeDeallocatedAndTheirClassDisposed() throws {
        // While hooked.
        let c1 = try makeCalc("HookDisposeHooked")
        do {
            let x = try c1.createInstance()
            let token = try x.hook("add:to:", .before) { _ in }
            XCTAssertEqual(try x.send("add:to:", 1, 1) as Int, 2)
            _ = token
        }
        fwdCollect()
        XCTAssertNoThrow(try c1.dispose())

        // After the hooks were removed.
        let c2 = try makeCalc("HookDisposeUnhooked")
        do {
            let x = try c2.createInstance()
            let token = try x.hook("add:to:", .before) { _ in }
            XCTAssertEqual(try x.send("add:to:", 1, 1) as Int, 2)
            token.remove()
        }
        fwdCollect()
        XCTAssertNoThrow(try c2.dispose(), "the object's private subclass must go with the object")
    }

    func testPerInstanceHookDoesNotOutliveItsObject() throws {
        // The private class of a dead object must never be given to a new object that happens to
        // get the same address.
        let x = try makeCalc("HookAddrX")
        let y = try makeClass("HookAddrY", ivars: [("tag", .int64)])
        try y.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a * b }
        XCTAssertEqual(x.instanceSize, y.instanceSize)
        var addresses: Set<UInt> = []
        for _ in 0..<32 {
            let o = try x.createInstance()
            addresses.insert(UInt(bitPattern: o.raw))
            let t = try o.hook("add:to:", .before) { _ in }
            t.remove()
        }
        var reused = 0
        var keep: [Object] = []
        for _ in 0..<64 {
            let o = try y.createInstance()
            keep.append(o)
            guard addresses.contains(UInt(bitPattern: o.raw)) else { continue }
            reused += 1
            let t = try o.hook("add:to:", .before) { _ in }
            XCTAssertEqual(o.runtimeClass, y)
            XCTAssertEqual(try o.send("add:to:", 3, 4) as Int, 12, "a Y at a reused address behaves as a Y")
            t.remove()
        }
        if reused == 0 { print("note: no address was reused; the check above did not run") }
    }

    // MARK: - Exact restoration

    func testUnhookRestoresTheExactImplementation() throws {
        let cls = try makeCalc("HookRestore")
        let cFunction: @convention(c) (sf_id?, sf_sel?, Int64) -> Int64 = { _, _, x in x &* 3 }
        try cls.addMethod("triple:", implementation: IMP(unsafeBitCast(cFunction, to: sf_imp.self)), types: "q@:q")
        try cls.metaclass.addMethod("version") { (_: ObjectRef) -> Int in 1 }
        let o = try cls.createInstance()
        for (owner, sel) in [(cls, "add:to:"), (cls, "triple:"), (cls.metaclass, "version")] as [(RuntimeClass, Selector)] {
            let before = imp(owner, sel)!
            let method = sf_class_getInstanceMethod(owner.raw, sel.raw)!
            XCTAssertEqual(fwdIMP(sf_class_getMethodImplementation(owner.raw, sel.raw)), before)
            var tokens: [HookToken] = []
            for position in [HookPosition.before, .instead, .after, .before] {
                tokens.append(try owner.hook(sel, position) { ctx in if position == .instead { try ctx.proceed() } })
                XCTAssertNotEqual(imp(owner, sel), before, "a trampoline is installed")
                XCTAssertEqual(sf_class_getInstanceMethod(owner.raw, sel.raw), method, "in the same table entry")
            }
            tokens.shuffled().forEach { $0.remove() }
            XCTAssertEqual(imp(owner, sel), before, "\(sel)")
            XCTAssertEqual(imp(owner, sel)?.isClosure, before.isClosure)
            XCTAssertEqual(fwdIMP(sf_class_getMethodImplementation(owner.raw, sel.raw)), before)
            XCTAssertEqual(fwdIMP(sf_method_getImplementation(method)), before)
        }
        XCTAssertEqual(try o.send("triple:", 5) as Int, 15)
        XCTAssertEqual(try cls.send("version") as Int, 1)
    }

    // MARK: - super

    func testSuperclassAndSubclassHookedWhereTheSubclassCallsSuper() throws {
        let base = try makeClass("HookSuperBase")
        try base.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        let sub = try makeClass("HookSuperSub", superclass: base)
        // [super value:x*10] + 1000, spelled the C way: sf_msg_lookup_super from the superclass.
        // (obj.asSuper(of:) does not reach the superclass today: ForwardingKnownBugTests.)
        try sub.addMethod("value:") { (me: ObjectRef, x: Int) -> Int in
            typealias F = @convention(c) (sf_id?, sf_sel?, Int64) -> Int64
            let sel = Selector("value:")
            let superIMP = unsafeBitCast(sf_msg_lookup_super(base.raw, sel.raw)!, to: F.self)
            return Int(superIMP(me.raw, sel.raw, Int64(x * 10))) + 1000
        }
        let s = try sub.createInstance()
        let b = try base.createInstance()
        XCTAssertEqual(try s.send("value:", 1) as Int, 1011)
        nonisolated(unsafe) var log: [String] = []
        let tb = try base.hook("value:", .instead) { ctx in
            log.append("base")
            try ctx.proceed()
        }
        let ts = try sub.hook("value:", .instead) { ctx in
            log.append("sub")
            try ctx.proceed()
        }
        XCTAssertEqual(try s.send("value:", 1) as Int, 1011)
        XCTAssertEqual(log, ["sub", "base"], "each hook once, no recursion")
        log = []
        XCTAssertEqual(try b.send("value:", 1) as Int, 2)
        XCTAssertEqual(log, ["base"])
        tb.remove()
        ts.remove()

        // The subclass inherits the method (no implementation of its own) and both are hooked.
        let plain = try makeClass("HookSuperPlain", superclass: base)
        let p = try plain.createInstance()
        log = []
        let t1 = try base.hook("value:", .before) { _ in log.append("base") }
        let t2 = try plain.hook("value:", .before) { _ in log.append("plain") }
        XCTAssertEqual(try p.send("value:", 1) as Int, 2)
        XCTAssertEqual(log, ["plain", "base"])
        // And a per-instance hook on top of both.
        let t3 = try p.hook("value:", .before) { _ in log.append("instance") }
        log = []
        XCTAssertEqual(try p.send("value:", 1) as Int, 2)
        XCTAssertEqual(log, ["plain", "instance", "base"], "merged with the nearest class hook")
        [t1, t2, t3].forEach { $0.remove() }
    }

    // MARK: - replaceMethod on a hooked method

    func testReplaceMethodOnAHookedMethodKeepsTheHookAroundTheNewImplementation() throws {
        let cls = try makeCalc("HookReplace")
        let original = imp(cls, "add:to:")!
        let o = try cls.createInstance()
        nonisolated(unsafe) var log: [String] = []
        nonisolated(unsafe) var wrapped: IMP?
        let token = try cls.hook("add:to:", .after) { ctx in
            wrapped = ctx.originalImplementation
            log.append("after \(try ctx.returnValue(as: Int.self))")
        }
        let previous = try cls.replaceMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a * b }
        XCTAssertEqual(previous, original, "replaceMethod returns the implementation it replaced")
        XCTAssertEqual(try o.send("add:to:", 3, 4) as Int, 12)
        XCTAssertEqual(log, ["after 12"], "the hook wraps the new implementation")
        XCTAssertNotEqual(wrapped, original)
        token.remove()
        XCTAssertEqual(imp(cls, "add:to:"), wrapped, "unhooking restores the new implementation")
        XCTAssertEqual(try o.send("add:to:", 3, 4) as Int, 12)
        // The replaced implementation stays callable through the IMP we got back.
        let inv = Invocation(signature: try Signature("q@:qq"), target: o, selector: "add:to:")
        try inv.setArgument(3, at: 0)
        try inv.setArgument(4, at: 1)
        try inv.invoke(using: previous!)
        XCTAssertEqual(try inv.returnValue(as: Int.self), 7)

        // On a subclass hooked on an inherited method: the replacement becomes its own method.
        let sub = try makeClass("HookReplaceSub", superclass: cls)
        let s = try sub.createInstance()
        log = []
        let t2 = try sub.hook("add:to:", .after) { ctx in log.append("sub \(try ctx.returnValue(as: Int.self))") }
        XCTAssertNil(try sub.replaceMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a - b })
        XCTAssertEqual(try s.send("add:to:", 3, 4) as Int, -1)
        XCTAssertEqual(try o.send("add:to:", 3, 4) as Int, 12, "the superclass is untouched")
        XCTAssertEqual(log, ["sub -1"])
        t2.remove()
        XCTAssertNotNil(sub.ownMethod(for: "add:to:"), "the replacement stays")
        XCTAssertEqual(try s.send("add:to:", 3, 4) as Int, -1)
        // A replacement with other types is refused while hooked, too.
        let t3 = try cls.hook("add:to:", .before) { _ in }
        XCTAssertTrue(thrownError { try cls.replaceMethod("add:to:") { (_: ObjectRef, a: Double, b: Double) in a + b } }?.isSignatureMismatch ?? false)
        t3.remove()
    }

    // MARK: - Observers

    func testObservers() throws {
        let cls = try makeCalc("HookObservers")
        let o = try cls.createInstance()
        nonisolated(unsafe) var sent: [String] = []
        nonisolated(unsafe) var invoked: [String] = []
        let t1 = try cls.onMessageSent("add:to:") { target, args in
            XCTAssertEqual(target.raw, o.raw)
            sent.append(args.map { "\($0)" }.joined(separator: ","))
        }
        let t2 = try cls.onMethodInvoked("add:to:") { _, args, result in
            invoked.append("\(args.map { "\($0)" }.joined(separator: ",")) -> \(result)")
        }
        let t3 = try cls.onMethodInvoked("make") { _, _, result in
            invoked.append("make -> \(result.objectValue?.runtimeClass?.name == cls.name)")
        }
        XCTAssertEqual(try o.send("add:to:", 4, 5) as Int, 9)
        do { _ = try o.send("make") as Object? }
        XCTAssertEqual(sent, ["4,5"])
        XCTAssertEqual(invoked, ["4,5 -> 9", "make -> true"])
        XCTAssertEqual(Runtime.liveObjectCount, objectBaseline + 1, "observing an object result does not leak it")
        [t1, t2, t3].forEach { $0.remove() }
        _ = try o.send("add:to:", 1, 1) as Int
        XCTAssertEqual(sent.count, 1)

        // onDeallocate: in registration order, once, with the object; removable.
        nonisolated(unsafe) var order: [String] = []
        do {
            let d = try cls.createInstance()
            nonisolated(unsafe) let raw = d.raw
            d.onDeallocate { obj in
                XCTAssertEqual(obj.raw, raw)
                order.append("first")
            }
            let removed = d.onDeallocate { _ in order.append("removed") }!
            d.onDeallocate { obj in
                XCTAssertEqual(try? obj.send("add:to:", 1, 1) as Int, 2, "the object is intact")
                order.append("second")
            }
            XCTAssertTrue(d.removeDeallocObserver(removed))
            XCTAssertFalse(d.removeDeallocObserver(removed))
            let t = try d.hook("add:to:", .before) { _ in order.append("hook") }
            _ = t
        }
        XCTAssertEqual(order, ["first", "hook", "second"])
        XCTAssertNil(ObjectRef(sf_class_as_object(cls.raw)).onDeallocate { _ in }, "classes are never deallocated")
    }
}
