import CInteropFixtures
import CDynamicRuntime
import Foundation
import Synchronization
import XCTest
@testable import DynamicRuntime

/// fork() while other threads use the runtime. The child has only the forking
/// thread; without the runtime's atfork handlers it would hang on locks other threads held.
final class ForkTests: XCTestCase {
    nonisolated(unsafe) static var shared: (cls: RuntimeClass, obj: Object)?

    /// What a child does: send, create a class, hook, use the C API and associations.
    /// Returns 0, or the step that failed.
    static let childBody: fx_child_fn = { _ in
        guard let (cls, obj) = ForkTests.shared else { return 1 }
        do {
            guard try obj.send("ping:", 1) as Int == 2 else { return 10 }
            let fresh = try RuntimeClass(name: "Fork.Child.\(getpid())")
            try fresh.addMethod(Selector("twice:")) { (_: ObjectRef, x: Int) -> Int in 2 * x }
            guard try fresh.createInstance().send("twice:", 21) as Int == 42 else { return 11 }
            nonisolated(unsafe) var seen = 0
            let token = try cls.hook("ping:", .after) { _ in seen += 1 }
            _ = try obj.send("ping:", 2) as Int
            token.remove()
            guard seen == 1 else { return 12 }
            guard sf_getClass("Fork.Child.\(getpid())") == fresh.raw,
                  sf_sel_registerName("fork.child.\(getpid()):") != nil else { return 13 }
            guard obj.setAssociatedValue(7, for: AssociationKey("fork")) else { return 14 }
            _ = try Signature("q@:{ForkChild\(getpid())=qd}")
        } catch {
            return 20
        }
        return 0
    }

    func testChildrenOfABusyProcessCanUseTheRuntime() throws {
        let cls = try RuntimeClass(name: "Fork.Busy")
        try cls.addMethod("ping:") { (_: ObjectRef, x: Int) -> Int in x + 1 }
        let obj = try cls.createInstance()
        Self.shared = (cls, obj)
        defer { Self.shared = nil }
        let stop = Atomic<Bool>(false)
        // Each worker's finished rounds: a child is forked only once every worker made progress
        // since the last one, so forks land among the workers' operations without a sleep.
        let rounds = UnsafeMutableBufferPointer<Atomic<Int>>.allocate(capacity: 4)
        for i in 0..<4 { (rounds.baseAddress! + i).initialize(to: Atomic(0)) }
        defer { rounds.deallocate() }
        nonisolated(unsafe) let progress = rounds
        let group = DispatchGroup()
        let workers: [@Sendable (Int) throws -> Void] = [
            { _ in _ = try obj.send("ping:", 1) as Int },
            { i in
                let c = try RuntimeClass(name: "Fork.Hammer.\(i)")
                let sel = Selector("m\(i % 64):")
                try c.addMethod(sel) { (_: ObjectRef, x: Int) -> Int in x }
                _ = try c.createInstance().send(sel, i) as Int
                try c.dispose()
            },
            { _ in try cls.hook("ping:", .before) { _ in }.remove() },
            { i in
                _ = Selector("fork.hammer.\(i % 4096):")
                _ = try? Signature("v@:{ForkHammer\(i % 512)=q}")
                let o = try cls.createInstance()
                o.setAssociatedValue(i, for: AssociationKey("h"))
                let weak = try WeakReference(o)
                _ = weak.object
            },
        ]
        // Warm up: the Swift runtime's metadata caches have locks of their own, without fork
        // handlers, taken when a type is first instantiated. A child forked while a worker
        // instantiates one could hang on it, so every type the child needs is made before the
        // workers start, and theirs before the first fork (docs/reliability.md, "fork").
        XCTAssertEqual(Self.childBody(nil), 0, "the child's work, done once by the parent")
        for (w, work) in workers.enumerated() {
            group.enter()
            Thread {
                var i = 0
                while !stop.load(ordering: .relaxed) {
                    do { try work(i) } catch { XCTFail("\(error)") }
                    i += 1
                    progress[w].store(i, ordering: .releasing)
                }
                group.leave()
            }.start()
        }
        var seen = [Int](repeating: 0, count: 4)
        for w in 0..<4 { while progress[w].load(ordering: .acquiring) < 3 { sched_yield() } }
        var results: [Int32] = []
        for _ in 0..<20 {
            for w in 0..<4 {
                while progress[w].load(ordering: .acquiring) <= seen[w] { sched_yield() }
                seen[w] = progress[w].load(ordering: .acquiring)
            }
            // The alarm only catches a hang: a healthy child takes milliseconds, however loaded.
            results.append(fx_fork_and_run(Self.childBody, nil, 60))
        }
        stop.store(true, ordering: .relaxed)
        group.wait()
        XCTAssertEqual(results, Array(repeating: 0, count: 20),
                       "children's exit statuses (128 + 14: hung, killed by the alarm)")
    }

    // One lock at a time, held by another thread when fork() begins: the prepare handler must
    // wait for it, so the child finds it free. The holder lets go only once the handler runs
    // (no sleep): without a handler for that lock the child would inherit it held and hang.
    nonisolated(unsafe) static var childUse: (() throws -> Bool)?

    static let lockChild: fx_child_fn = { _ in
        do { return try ForkTests.childUse?() == true ? 0 : 1 } catch { return 2 }
    }

    private func forkWhileHeld(_ what: String, hold: @escaping @Sendable () -> Void, release: @escaping @Sendable () -> Void,
                               child: @escaping () throws -> Bool) {
        // The child's types are instantiated before the fork (see the busy test).
        XCTAssertEqual(try child(), true, "the child's work, done once by the parent")
        let held = Atomic<Bool>(false)
        let preparing = Atomic<Bool>(false)
        // The holder stays until the fork is over: a thread exiting meanwhile may hold locks of
        // the Swift runtime's own.
        let forked = DispatchSemaphore(value: 0)
        ForkSafety.willPrepareForTesting = { preparing.store(true, ordering: .releasing) }
        Self.childUse = child
        defer {
            ForkSafety.willPrepareForTesting = nil
            Self.childUse = nil
        }
        let holder = Thread {
            hold()
            held.store(true, ordering: .releasing)
            while !preparing.load(ordering: .acquiring) { sched_yield() }
            release()
            forked.wait()
        }
        holder.start()
        while !held.load(ordering: .acquiring) { sched_yield() }
        XCTAssertEqual(fx_fork_and_run(Self.lockChild, nil, 60), 0, "the child of a fork while \(what) was held")
        // Had no handler run, the holder would still wait: the failure must not hang later tests.
        preparing.store(true, ordering: .releasing)
        forked.signal()
    }

    func testThePrepareHandlerTakesEverySideTableLock() {
        XCTAssertEqual(sf_side_locks_held_for_testing(), 0)
        ForkSafety.prepare()
        let held = sf_side_locks_held_for_testing()
        ForkSafety.parent()
        XCTAssertEqual(held, Int32(SF_SIDE_LOCKS), "a table's lock may be any of them")
        XCTAssertEqual(sf_side_locks_held_for_testing(), 0)
    }

    func testASideTableLockHeldAtForkIsFreeInTheChild() throws {
        let cls = try RuntimeClass(name: "Fork.SideTable")
        let obj = try cls.createInstance()
        let key = AssociationKey("fork.side")
        obj.setAssociatedValue(1, for: key)
        let mine = AssociationKey("fork.side.child")
        nonisolated(unsafe) let table = UnsafeRawPointer(sf_object_side(obj.raw)!)
        forkWhileHeld("a side-table lock", hold: { sf_side_lock(table) }, release: { sf_side_unlock(table) }) {
            // The same table, so the same lock: a key of the child's own, its pid as the value.
            obj.setAssociatedValue(Int(getpid()), for: mine)
            return obj.associatedValue(for: mine) as? Int == Int(getpid()) && obj.associatedValue(for: key) as? Int == 1
        }
        XCTAssertEqual(obj.associatedValue(for: mine) as? Int, Int(getpid()), "the parent's value is its own")
    }

    func testTheTrampolineLockHeldAtForkIsFreeInTheChild() throws {
        forkWhileHeld("the trampoline allocator's lock", hold: { sf_tramp_atfork_prepare() }, release: { sf_tramp_atfork_release() }) {
            let cls = try RuntimeClass(name: "Fork.Trampoline.\(getpid())")
            try cls.addMethod("twice:") { (_: ObjectRef, x: Int) -> Int in 2 * x }
            return try cls.createInstance().send("twice:", 21) as Int == 42
        }
    }

    func testACHandleTablesLockHeldAtForkIsFreeInTheChild() throws {
        let table = CInvocations.table
        forkWhileHeld("the C invocation handles' lock", hold: { table.lockForTesting() }, release: { table.unlockForTesting() }) {
            table.count >= 0
        }
    }

    func testTheRuntimeLockHeldAtForkIsFreeInTheChild() throws {
        forkWhileHeld("the runtime lock", hold: { Runtime.state.lock.lock() }, release: { Runtime.state.lock.unlock() }) {
            let cls = try RuntimeClass(name: "Fork.RuntimeLock.\(getpid())")
            try cls.addMethod("twice:") { (_: ObjectRef, x: Int) -> Int in 2 * x }
            let token = try cls.hook("twice:", .before) { _ in }
            defer { token.remove() }
            return try cls.createInstance().send("twice:", 4) as Int == 8
        }
    }
    func testTheInitializeMonitorHeldAtForkIsFreeInTheChild() throws {
        nonisolated(unsafe) let m = ClassInitialization.mutex
        nonisolated(unsafe) var made = 0
        forkWhileHeld("the +initialize monitor", hold: { pthread_mutex_lock(m) }, release: { pthread_mutex_unlock(m) }) {
            // A fresh class each time (the parent's own run first): its first send initializes it.
            made += 1
            let cls = try RuntimeClass(name: "Fork.Initialize.\(getpid()).\(made)")
            nonisolated(unsafe) var initialized = 0
            try cls.metaclass.addMethod("initialize") { (_: ObjectRef) in initialized += 1 }
            try cls.addMethod("twice:") { (_: ObjectRef, x: Int) -> Int in 2 * x }
            return try cls.createInstance().send("twice:", 5) as Int == 10 && initialized == 1
        }
    }

    func testTheForwardHandlerLockHeldAtForkIsFreeInTheChild() throws {
        let lock = ForwardHandler.installed
        forkWhileHeld("the forward handler's lock", hold: { lock.lock() }, release: { lock.unlock() }) {
            let cls = try RuntimeClass(name: "Fork.ForwardHandler.\(getpid())")
            ForwardHandler.set { _ in false }
            defer { ForwardHandler.set(nil) }
            return ForwardHandler.current != nil && (try? cls.createInstance().send("missing", as: Void.self)) == nil
        }
    }
    func testTheIntBodyOwnersLockHeldAtForkIsFreeInTheChild() throws {
        nonisolated(unsafe) let lock = IntBodyOwners.names
        nonisolated(unsafe) var made = 0
        forkWhileHeld("the Int bodies' owner names lock", hold: { lock.lock() }, release: { lock.unlock() }) {
            made += 1
            let cls = try RuntimeClass(name: "Fork.IntOwners.\(getpid()).\(made)")
            // A throwing Int body registers its owner's name under that lock.
            let before = lock.withLock { $0.count }
            try cls.addMethod("twice:") { (_: ObjectRef, x: Int) throws -> Int in
                if x < 0 { throw RuntimeError.nullArgument("x") }
                return 2 * x
            }
            let sent: Int = try cls.createInstance().send("twice:", 8)
            return lock.withLock { $0.count } == before + 1 && sent == 16
        }
    }
}
