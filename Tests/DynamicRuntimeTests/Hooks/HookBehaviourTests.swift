// Hooking methods by name — positions, order, tokens, dropping
// and keeping calls. Where hooks apply, restoration, super, replaceMethod and observers are in
// HookScopeTests.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class HookBehaviourTests: HookBehaviourTestCase {
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
            weakArg = try WeakReference(arg)
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
}
