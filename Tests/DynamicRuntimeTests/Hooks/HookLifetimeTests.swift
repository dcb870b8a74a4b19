// Lifetimes around hooks: hidden per-object classes live exactly as long as their object,
// and an invocation a hook captured stays replayable after every hook involved is gone.
import TestSupport
import CDynamicRuntime
import Dispatch
import Foundation
import XCTest
@testable import DynamicRuntime

final class HookLifetimeTests: XCTestCase {
    // MARK: replay after the hooks are gone

    /// A per-object hook's original is its class's current IMP: here the class hook's
    /// trampoline. The captured record must still replay once both hooks are removed and
    /// their memory collected (a trampoline holding its hook unowned(unsafe) would call freed memory).
    func testReplayThroughARemovedClassHookCallsTheOriginal() throws {
        let fx = try HookLifetimeFixture("ReplayPerObject")
        var obj: Object? = try fx.cls.createInstance()
        fwdCollect()
        let closures = Runtime.liveClosureCount, objects = Runtime.liveObjectCount
        nonisolated(unsafe) var kept: Invocation?
        nonisolated(unsafe) var classHookRuns = 0
        var classToken: HookToken? = try fx.cls.hook("twice:", .before) { _ in classHookRuns += 1 }
        var objectToken: HookToken? = try obj!.hook("twice:", .instead) { ctx in kept = ctx.makeInvocation() }
        XCTAssertEqual(try obj!.send("twice:", 21) as Int, 0, "the instead-hook did not proceed")
        XCTAssertEqual(classHookRuns, 1, "the class's before hook runs before the object's instead hook")
        XCTAssertEqual(fx.count, 0)
        XCTAssertTrue(objectToken!.remove())
        XCTAssertTrue(classToken!.remove())
        objectToken = nil
        classToken = nil
        fwdCollect()
        churnHeap()

        try kept!.invoke()
        XCTAssertEqual(try kept!.returnValue(as: Int.self), 42)
        XCTAssertEqual(fx.count, 1, "the original ran once")
        XCTAssertEqual(classHookRuns, 1, "the removed class hook does not run")
        try kept!.invoke()
        XCTAssertEqual(fx.count, 2, "and can be replayed again")

        kept = nil
        obj = nil
        fwdCollect()
        XCTAssertEqual(Runtime.liveClosureCount, closures, "the trampolines went with the record")
        XCTAssertEqual(Runtime.liveObjectCount, objects - 1)
    }

    /// The same through a subclass (an inherited hook), replayed on another thread after the
    /// subclass's and the superclass's hooks were removed.
    func testReplayOfAnInheritedHookCaptureOnAnotherThread() throws {
        let base = try HookLifetimeFixture("ReplayBase")
        let sub = try makeClass("ReplaySub", superclass: base.cls)
        let obj = try sub.createInstance()
        fwdCollect()
        let closures = Runtime.liveClosureCount
        nonisolated(unsafe) var kept: [Invocation] = []
        var tokens = [
            try base.cls.hook("twice:", .after) { _ in },
            try sub.hook("twice:", .instead) { ctx in kept.append(ctx.makeInvocation()) },
        ]
        for i in 0..<10 { XCTAssertEqual(try obj.send("twice:", i) as Int, 0) }
        for t in tokens { XCTAssertTrue(t.remove()) }
        tokens = []
        fwdCollect()
        churnHeap()
        let results = Locked<[Int]>([])
        let box = Locked<[Invocation]>([])   // the thread's closure may outlive the wait: it holds only the box
        for inv in kept { box.append(inv) }
        kept = []
        fwdRunOnNewThread {
            for inv in box.take() {
                do {
                    try inv.invoke()
                    results.append(try inv.returnValue(as: Int.self))
                } catch {
                    results.append(-1)
                }
            }
        }
        XCTAssertEqual(results.current, (0..<10).map { 2 * $0 })
        XCTAssertEqual(base.count, 10)
        fwdCollect()
        XCTAssertEqual(Runtime.liveClosureCount, closures)
    }

    // MARK: hidden per-object classes

    /// Hooked and unhooked, hooked and left hooked: either way the hidden class goes with the
    /// object, so its class can be disposed and every closure is freed.
    func testHiddenClassGoesWithItsObjectHookedOrNot() throws {
        for leaveHooked in [false, true] {
            let fx = try HookLifetimeFixture("HiddenGoes")
            fwdCollect()
            let closures = Runtime.liveClosureCount
            do {
                let o = try fx.cls.createInstance()
                let t = try o.hook("twice:", .after) { ctx in try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 1) }
                XCTAssertEqual(try o.send("twice:", 5) as Int, 11)
                if !leaveHooked {
                    XCTAssertTrue(t.remove())
                    XCTAssertEqual(try o.send("twice:", 5) as Int, 10)
                }
            }
            XCTAssertNoThrow(try fx.cls.dispose(), "leaveHooked=\(leaveHooked)")
            fwdCollect()
            XCTAssertEqual(Runtime.liveClosureCount, closures - 1, "leaveHooked=\(leaveHooked): only twice:'s closure went with the class")
        }
    }

    /// Many objects of two classes with the same size, hooked, unhooked and freed in turn so
    /// that addresses are reused: every object is hooked as an instance of its own class.
    func testReusedAddressesAreHookedAsTheirOwnClass() throws {
        let a = try makeClass("AddrA", ivars: [("x", .int64)])
        let b = try makeClass("AddrB", ivars: [("y", .int64)])
        try a.addMethod("who") { (_: ObjectRef) -> Int in 1 }
        try b.addMethod("who") { (_: ObjectRef) -> Int in 2 }
        var seen = Set<UnsafeMutableRawPointer>(), reused = 0
        for i in 0..<2000 {
            let cls = i % 3 == 0 ? a : b
            let o = try cls.createInstance()
            if !seen.insert(UnsafeMutableRawPointer(o.raw)).inserted { reused += 1 }
            let t = try o.hook("who", .after) { ctx in try ctx.setReturnValue(try ctx.returnValue(as: Int.self) * 10) }
            XCTAssertEqual(o.runtimeClass, cls)
            XCTAssertEqual(try o.send("who") as Int, cls === a ? 10 : 20)
            if i % 2 == 0 { t.remove() }
            XCTAssertEqual(try o.send("who") as Int, cls === a ? (i % 2 == 0 ? 1 : 10) : (i % 2 == 0 ? 2 : 20))
        }
        XCTAssertNoThrow(try a.dispose())
        XCTAssertNoThrow(try b.dispose())
        // ASan's quarantine, for one, never hands an address out again.
        if reused == 0 { throw XCTSkip("the allocator did not reuse an address") }
    }

    /// A dealloc observer cannot give its dying object a hidden class (it would outlive it).
    func testADeallocObserverCannotHookItsObject() throws {
        let fx = try HookLifetimeFixture("HiddenDying")
        let result = Locked<[Int]>([])
        do {
            let o = try fx.cls.createInstance()
            o.onDeallocate { ref in
                do {
                    try ref.hook("twice:") { _ in }
                    result.append(1)
                } catch RuntimeError.hookFailed(let context) {
                    result.append(context.actual == "an object being deallocated" ? 0 : 2)
                } catch {
                    result.append(3)
                }
            }
        }
        XCTAssertEqual(result.current, [0], "hookFailed: the object is being deallocated")
        XCTAssertNoThrow(try fx.cls.dispose())
    }

    /// A token of an object that died while hooked is inactive; removing it is harmless.
    func testATokenOfADeadObjectIsInactive() throws {
        let fx = try HookLifetimeFixture("HiddenDead")
        var o: Object? = try fx.cls.createInstance()
        let t = try o!.hook("twice:") { _ in }
        XCTAssertTrue(t.isActive)
        o = nil
        XCTAssertFalse(t.isActive)
        XCTAssertFalse(t.remove())
        XCTAssertNoThrow(try fx.cls.dispose())
    }
}

/// The concurrent cases, apart so that CI's TSan run (filter 'Concurrency|Stress') has them.
final class HookLifetimeConcurrencyTests: XCTestCase {
    /// Senders capture through a per-object hook while another thread hooks and unhooks the
    /// class over and over; every record replays to the original afterwards, on several
    /// threads, and nothing leaks. (Run under TSan in CI.)
    func testConcurrentCaptureWhileTheClassHookChurns() throws {
        let fx = try HookLifetimeFixture("ReplayChurn")
        let objects = try (0..<4).map { _ in try fx.cls.createInstance() }
        fwdCollect()
        let closures = Runtime.liveClosureCount
        let kept = Locked<[Invocation]>([])
        let tokens = try objects.map { o in try o.hook("twice:", .instead) { ctx in kept.append(ctx.makeInvocation()) } }
        let stop = Locked(false), churned = DispatchSemaphore(value: 0)
        Thread {
            while !stop.current {
                if let t = try? fx.cls.hook("twice:", .before, { _ in }) { t.remove() }
            }
            churned.signal()
        }.start()
        let perThread = 300
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for i in 0..<perThread { _ = try? objects[t].send("twice:", t * perThread + i) as Int }
        }
        stop.set(true)
        churned.wait()
        for t in tokens { XCTAssertTrue(t.remove()) }
        fwdCollect()
        churnHeap()
        let records = kept.take()
        XCTAssertEqual(records.count, 4 * perThread)
        let sums = Locked<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            var sum = 0
            for inv in records[(t * perThread)..<((t + 1) * perThread)] {
                try? inv.invoke()
                sum += (try? inv.returnValue(as: Int.self)) ?? -1_000_000
            }
            sums.append(sum)
        }
        XCTAssertEqual(sums.current.reduce(0, +), (0..<(4 * perThread)).reduce(0) { $0 + 2 * $1 })
        XCTAssertEqual(fx.count, 4 * perThread)
        _ = consume records
        fwdCollect()
        XCTAssertEqual(Runtime.liveClosureCount, closures)
    }

    /// `originalImplementation` and captures read the wrapped IMP without the runtime lock
    /// while the method is replaced: each record replays one of the implementations, never a
    /// freed one.
    func testCaptureWhileTheHookedMethodIsReplaced() throws {
        let fx = try HookLifetimeFixture("ReplayReplace")
        var obj: Object? = try fx.cls.createInstance()
        fwdCollect()
        let closures = Runtime.liveClosureCount
        let kept = Locked<[Invocation]>([])
        var token: HookToken? = try fx.cls.hook("twice:", .instead) { ctx in
            _ = ctx.originalImplementation
            kept.append(ctx.makeInvocation())
        }
        let stop = Locked(false), replaced = DispatchSemaphore(value: 0)
        Thread {
            var k = 3
            while !stop.current {
                let factor = k
                _ = try? fx.cls.replaceMethod("twice:") { (_: ObjectRef, x: Int) -> Int in factor * x }
                k = k == 9 ? 3 : k + 1
            }
            replaced.signal()
        }.start()
        do {
            let o = obj!
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for _ in 0..<300 { _ = try? o.send("twice:", 1) as Int }
            }
        }
        stop.set(true)
        replaced.wait()
        XCTAssertTrue(token!.remove())
        token = nil   // a token keeps its hook, and the hook the IMP it wrapped
        fwdCollect()
        churnHeap()
        let records = kept.take()
        XCTAssertEqual(records.count, 1200)
        for inv in records {
            try inv.invoke()
            let r = try inv.returnValue(as: Int.self)
            XCTAssertTrue(r == 2 || (3...9).contains(r), "replayed \(r)")
        }
        _ = consume records
        obj = nil
        try fx.cls.dispose()   // frees the last replacement's closure
        fwdCollect()
        XCTAssertEqual(Runtime.liveClosureCount, closures - 1, "the first implementation's closure went with the class")
    }

    /// Threads racing to make one object's first hook share one hidden class; the losers'
    /// classes are disposed, so the visible class can be disposed afterwards.
    func testConcurrentFirstHooksOnOneObjectShareOneHiddenClass() throws {
        let fx = try HookLifetimeFixture("HiddenRace")
        for _ in 0..<50 {
            let o = try fx.cls.createInstance()
            let runs = Locked<[Int]>([])
            let tokens = Locked<[HookToken]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { t in
                if let token = try? o.hook("twice:", .before, { _ in runs.append(t) }) { tokens.append(token) }
            }
            XCTAssertEqual(tokens.current.count, 8)
            XCTAssertEqual(try o.send("twice:", 1) as Int, 2)
            XCTAssertEqual(runs.current.sorted(), Array(0..<8), "all hooks sit on one hidden class")
            for t in tokens.take() { XCTAssertTrue(t.remove()) }
        }
        XCTAssertNoThrow(try fx.cls.dispose(), "no hidden class left behind")
    }
}

/// A class whose `twice:` returns 2x, and whose `calls` counts real calls.
final class HookLifetimeFixture: @unchecked Sendable {
    let cls: RuntimeClass
    let calls = NSLock()
    private var _count = 0
    var count: Int { calls.withLock { _count } }

    init(_ name: String, superclass: RuntimeClass? = nil) throws {
        cls = try makeClass(name, superclass: superclass)
        try cls.addMethod("twice:") { [unowned self] (_: ObjectRef, x: Int) -> Int in
            self.calls.withLock { self._count += 1 }
            return 2 * x
        }
    }
}

/// Allocates and frees enough that freed hook memory gets reused.
func churnHeap() {
    var junk: [AnyObject] = []
    for i in 0..<2000 { junk.append(NSString(string: "junk \(i)")); junk.append([UInt8](repeating: UInt8(i & 0xff), count: 64) as AnyObject) }
    withExtendedLifetime(junk) {}
}
