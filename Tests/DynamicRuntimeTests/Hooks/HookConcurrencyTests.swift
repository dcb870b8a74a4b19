// Sends on many threads while another thread hooks and unhooks
// the same method. Every result must be the hooked or the unhooked one, never garbage. Run
// these under ThreadSanitizer too:
//   swift test --sanitize=thread --scratch-path .build-hooks-tsan --filter HookConcurrencyTests
import TestSupport
import CDynamicRuntime
import Foundation
import XCTest
@testable import DynamicRuntime

final class HookConcurrencyTests: XCTestCase {
    static let senders = 8
    static let sendsPerThread = 4000
    static let offset = 1_000_000
    static let minimumToggles = 20

    /// Runs `senders` threads calling `send(thread, i)` (which returns nil when the result is one
    /// of the two allowed, or a description of what came back), while one more thread calls
    /// `toggle()` until they finish. Returns how many toggles happened.
    func race(send: @escaping @Sendable (Int, Int) -> String?, toggle: @escaping @Sendable () throws -> Void,
              until satisfied: @escaping @Sendable () -> Bool = { true },
              file: StaticString = #filePath, line: UInt = #line) {
        let bad = Locked<[String]>([])
        let finished = Locked(0)
        let toggles = Locked(0)
        let errors = Locked<[String]>([])
        let started = Locked(false)
        runThreads(Self.senders + 1) { thread in
            if thread == Self.senders {
                started.set(true)
                while finished.current < Self.senders {
                    do { try toggle() } catch { errors.withLock { $0.append("\(error)") } }
                    toggles.withLock { $0 += 1 }
                    usleep(150)  // let senders see the unhooked state too
                }
                return
            }
            while !started.current { sched_yield() }
            // At least sendsPerThread sends, and on until the method was hooked and unhooked a
            // number of times (a loaded machine may schedule the toggler late).
            var i = 0
            while i < Self.sendsPerThread
                    || ((toggles.current < Self.minimumToggles || !satisfied()) && i < 50 * Self.sendsPerThread) {
                if let problem = send(thread, i) {
                    bad.withLock { if $0.count < 10 { $0.append(problem) } }
                }
                i += 1
            }
            finished.withLock { $0 += 1 }
        }
        XCTAssertEqual(bad.current, [], "results other than hooked or unhooked", file: file, line: line)
        XCTAssertEqual(errors.current, [], file: file, line: line)
        XCTAssertGreaterThanOrEqual(toggles.current, Self.minimumToggles, file: file, line: line)
    }

    /// Races senders of `add:to:` against a thread that installs `hook(offset)` and removes it:
    /// even calls go to `hooked`, which may answer with or without `offset`; odd ones to `plain`,
    /// which must never see the hook.
    func raceHooked(_ hooked: Object, beside plain: Object, addend: Int,
                    hook: @escaping @Sendable (Int) throws -> HookToken, file: StaticString = #filePath, line: UInt = #line) {
        let offset = Self.offset
        race(send: { thread, i in
            let a = thread * 1000 + i
            if i % 2 == 0 {
                guard let r = try? hooked.send("add:to:", a, addend) as Int else { return "hooked threw" }
                return r == a + addend || r == a + addend + offset ? nil : "hooked (\(a)+\(addend)) -> \(r)"
            }
            guard let r = try? plain.send("add:to:", a, addend) as Int else { return "plain threw" }
            return r == a + addend ? nil : "the plain receiver saw the hook: \(r)"
        }, toggle: {
            try hook(offset).remove()
        }, file: file, line: line)
    }

    func assertCleanAfterwards(closures: Int, file: StaticString = #filePath, line: UInt = #line) {
        fwdCollect()
        XCTAssertEqual(Runtime.liveClosureCount, closures, "every trampoline freed", file: file, line: line)
        XCTAssertEqual(Runtime.state.retiredCount, 0, file: file, line: line)
    }

    func testSendersWhileAnotherThreadHooksAndUnhooks() throws {
        let cls = try makeClass("HookRace")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        try cls.addMethod("scale:") { (_: ObjectRef, x: Double) in x * 2 }
        try cls.addMethod("frame:") { (_: ObjectRef, d: Double) in
            FwdRect(origin: Point(x: d, y: -d), size: FwdSize(width: 2 * d, height: 3 * d))
        }
        let original = cls.ownMethod(for: "add:to:")!.implementation
        let o = try cls.createInstance()
        fwdCollect()
        let closures = Runtime.liveClosureCount
        let hookedSeen = Locked(0)
        let unhookedSeen = Locked(0)
        let offset = Self.offset
        race(send: { thread, i in
            let a = thread * 100_000 + i
            switch i % 4 {
            case 0, 1:
                // Typed send: the direct-call path.
                guard let r = try? o.send("add:to:", a, 7) as Int else { return "add:to: threw" }
                if r == a + 7 + offset { hookedSeen.withLock { $0 += 1 } }
                if r == a + 7 { unhookedSeen.withLock { $0 += 1 } }
                return r == a + 7 || r == a + 7 + offset ? nil : "add:to:(\(a), 7) = \(r)"
            case 2:
                guard let r = try? o.send("scale:", Double(a)) as Double else { return "scale: threw" }
                return r == Double(a) * 2 || r == Double(a) * 2 + 0.5 ? nil : "scale:(\(a)) = \(r)"
            default:
                // A 32-byte struct through libffi, as a dynamic send's record would see it.
                let d = Double(a)
                guard let r = try? o.send("frame:", d) as FwdRect else { return "frame: threw" }
                let plain = FwdRect(origin: Point(x: d, y: -d), size: FwdSize(width: 2 * d, height: 3 * d))
                var hooked = plain
                hooked.size.width += 1
                return r == plain || r == hooked ? nil : "frame:(\(d)) = \(r)"
            }
        }, toggle: {
            let t1 = try cls.hook("add:to:", .instead) { ctx in
                try ctx.proceed()
                try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + offset)
            }
            let t2 = try cls.hook("scale:", .after) { ctx in try ctx.setReturnValue(try ctx.returnValue(as: Double.self) + 0.5) }
            let t3 = try cls.hook("frame:", .after) { ctx in
                var r = try ctx.returnValue(as: FwdRect.self)
                r.size.width += 1
                try ctx.setReturnValue(r)
            }
            usleep(150)  // hooked for a while
            t1.remove()
            t2.remove()
            t3.remove()
        }, until: { hookedSeen.current > 0 && unhookedSeen.current > 0 })
        XCTAssertEqual(cls.ownMethod(for: "add:to:")!.implementation, original)
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        assertCleanAfterwards(closures: closures)
        XCTAssertGreaterThan(hookedSeen.current, 0, "some sends ran hooked")
        XCTAssertGreaterThan(unhookedSeen.current, 0, "some sends ran unhooked")
    }

    func testSendersWhileHooksComeAndGoWithAStandingHook() throws {
        // A hook that stays, and others added and removed around it: the chain is replaced
        // while calls run through it. Results: (a+b) * 2, optionally + 1.
        let cls = try makeClass("HookRaceChain")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let o = try cls.createInstance()
        var standing: HookToken? = try cls.hook("add:to:", .after) { ctx in try ctx.setReturnValue(try ctx.returnValue(as: Int.self) * 2) }
        fwdCollect()
        let closures = Runtime.liveClosureCount
        race(send: { thread, i in
            let a = thread * 1000 + i
            guard let r = try? o.send("add:to:", a, 1) as Int else { return "threw" }
            return r == (a + 1) * 2 || r == (a + 1) * 2 + 1 ? nil : "(\(a)+1) -> \(r)"
        }, toggle: {
            let t = try cls.hook("add:to:", .after) { ctx in try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 1) }
            let u = try cls.hook("add:to:", .before) { _ in }
            t.remove()
            u.remove()
        })
        standing!.remove()
        standing = nil  // a token owns its (uninstalled) hook until it goes
        assertCleanAfterwards(closures: closures - 1)
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
    }

    func testSendersToSubclassInstancesWhileAnInheritedMethodIsHooked() throws {
        // Hooking an inherited method adds a table entry to the subclass and flushes caches;
        // unhooking removes it.
        let base = try makeClass("HookRaceBase")
        try base.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let sub = try makeClass("HookRaceSub", superclass: base)
        let s = try sub.createInstance()
        let b = try base.createInstance()
        fwdCollect()
        let closures = Runtime.liveClosureCount
        raceHooked(s, beside: b, addend: 2) { offset in
            try sub.hook("add:to:", .after) { ctx in try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + offset) }
        }
        XCTAssertNil(sub.ownMethod(for: "add:to:"))
        assertCleanAfterwards(closures: closures)
    }

    func testSendersToAnObjectWhoseOwnHookComesAndGoes() throws {
        let cls = try makeClass("HookRaceInstance")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let hooked = try cls.createInstance()
        let other = try cls.createInstance()
        try hooked.hook("add:to:", .before) { _ in }.remove()
        fwdCollect()
        let closures = Runtime.liveClosureCount
        raceHooked(hooked, beside: other, addend: 3) { offset in
            try hooked.hook("add:to:", .after) { ctx in try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + offset) }
        }
        XCTAssertEqual(hooked.runtimeClass, cls)
        assertCleanAfterwards(closures: closures)
    }

    func testCSendersAndReplaysWhileHooking() throws {
        // sf_msg_send from C and replays of captured records, during hook churn.
        let cls = try makeClass("HookRaceC")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let o = try cls.createInstance()
        fwdCollect()
        let closures = Runtime.liveClosureCount
        let offset = Self.offset
        let kept = Locked<[Invocation]>([])
        race(send: { thread, i in
            let a = Int64(thread * 1000 + i)
            if i % 50 == 0, let inv = kept.withLock({ $0.popLast() }) {
                do {
                    try inv.invoke()
                    let r = try inv.returnValue(as: Int.self)
                    let x = try inv.argument(at: 0, as: Int.self)
                    return r == x + 1 ? nil : "replay (\(x)+1) -> \(r)"
                } catch {
                    return "replay threw \(error)"
                }
            }
            let args = FwdCArgs()
            args.add(a)
            args.add(Int64(1))
            var ret: Int64 = 0
            guard args.send(o.raw, "add:to:", &ret) == SF_OK else { return "C send failed: \(String(cString: sf_last_error_message()))" }
            return ret == a + 1 || ret == a + 1 + Int64(offset) ? nil : "C (\(a)+1) -> \(ret)"
        }, toggle: {
            let t = try cls.hook("add:to:", .instead) { ctx in
                if try ctx.argument(at: 0, as: Int.self) % 7 == 0 {
                    let inv = ctx.makeInvocation()
                    kept.withLock { if $0.count < 100 { $0.append(inv) } }
                }
                try ctx.proceed()
                try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + offset)
            }
            t.remove()
        })
        kept.set([])
        assertCleanAfterwards(closures: closures)
    }
}
