// Where hooks apply (class, inherited, per-instance), exact
// restoration, super calls, replaceMethod on a hooked method and observers.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class HookScopeTests: HookBehaviourTestCase {
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
        let (base, sub) = try makeSuperCallingPair("HookSuper")
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
