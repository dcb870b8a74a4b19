import TestSupport
import CDynamicRuntime
import Synchronization
import XCTest
@testable import DynamicRuntime

final class CacheTests: XCTestCase {
    func testSuperclassAddingOrRemovingAShadowingMethodInvalidates() throws {
        let a = try RuntimeClass(name: uniqueName("A"))
        let b = try RuntimeClass(name: uniqueName("B"), superclass: a)
        let c = try RuntimeClass(name: uniqueName("C"), superclass: b)
        let obj = try c.createInstance()
        try a.addMethod("foo") { (_: ObjectRef) in 1 }
        XCTAssertEqual(try obj.send("foo") as Int, 1)
        XCTAssertEqual(try obj.send("foo") as Int, 1, "now served from C's cache")
        XCTAssertNotNil(sf_cache_probe(c.raw, Selector("foo").raw), "the hit is cached in the receiver's class")

        try b.addMethod("foo") { (_: ObjectRef) in 2 }
        XCTAssertEqual(try obj.send("foo") as Int, 2, "B's new method shadows A's")
        XCTAssertEqual(try obj.send("foo").intValue, 2)
        XCTAssertEqual(try b.createInstance().send("foo") as Int, 2)

        try c.addMethod("foo") { (_: ObjectRef) in 3 }
        XCTAssertEqual(try obj.send("foo") as Int, 3, "a subclass override wins")

        try c.removeMethod("foo")
        XCTAssertEqual(try obj.send("foo") as Int, 2)
        try b.removeMethod("foo")
        XCTAssertEqual(try obj.send("foo") as Int, 1)
        try a.replaceMethod("foo") { (_: ObjectRef) in 4 }
        XCTAssertEqual(try obj.send("foo") as Int, 4, "replacing in place is seen through the cached entry")
        try a.removeMethod("foo")
        assertThrows(.doesNotRecognizeSelector(.init(className: c.name, selector: "foo", isClassMethod: false))) { try obj.send("foo") as Int }
    }

    func testAMethodAddedAfterAMissIsFound() throws {
        let cls = try RuntimeClass(name: uniqueName())
        let obj = try cls.createInstance()
        for _ in 0..<3 { XCTAssertFalse(obj.responds(to: "late")) }
        try cls.addMethod("late") { (_: ObjectRef) in 9 }
        XCTAssertEqual(try obj.send("late") as Int, 9)
        XCTAssertTrue(obj.responds(to: "late"))
    }

    func testClassMethodCachesAreInvalidatedToo() throws {
        let root = try RuntimeClass(name: uniqueName("Root"))
        let sub = try RuntimeClass(name: uniqueName("Sub"), superclass: root)
        try root.addMethod("who") { (_: ObjectRef) in 1 }
        XCTAssertEqual(try sub.send("who") as Int, 1, "root instance method, cached in Sub's metaclass")
        try root.metaclass.addMethod("who") { (_: ObjectRef) in 2 }
        XCTAssertEqual(try sub.send("who") as Int, 2, "a root class method now shadows it")
        try sub.metaclass.addMethod("who") { (_: ObjectRef) in 3 }
        XCTAssertEqual(try sub.send("who") as Int, 3)
        try root.metaclass.removeMethod("who")
        XCTAssertEqual(try root.send("who") as Int, 1)
        XCTAssertEqual(try sub.send("who") as Int, 3)
    }

    func testCachesGrowAndStayCorrect() throws {
        let cls = try RuntimeClass(name: uniqueName())
        let sub = try RuntimeClass(name: uniqueName("Sub"), superclass: cls)
        let count = 300
        for i in 0..<count { try cls.addMethod(Selector("m\(i)")) { (_: ObjectRef) in i } }
        let obj = try sub.createInstance()
        for round in 0..<3 {
            for i in 0..<count { XCTAssertEqual(try obj.send(Selector("m\(i)")) as Int, i, "round \(round)") }
        }
        let capacity = Int(sf_class_cache_capacity(sub.raw))
        XCTAssertEqual(Int(sf_class_cache_occupied(sub.raw)), count)
        XCTAssertGreaterThanOrEqual(capacity, count * 4 / 3, "load factor at most 3/4")
        XCTAssertEqual(capacity.nonzeroBitCount, 1, "capacity is a power of two")
        // Growth retired the smaller caches; with no reader inside, a collection frees them all.
        Runtime.state.collectGarbage()
        XCTAssertEqual(Runtime.state.retiredCount, 0, "caches retired by growth are on the one retired list")
    }

    /// A lookup in a class whose cache is still the shared empty one must terminate even when
    /// the memory after that empty cache is not zero (the empty cache needs a real bucket).
    func testLookupInAFreshClassAfterCacheGrowthTerminates() throws {
        let big = try RuntimeClass(name: uniqueName("Big"))
        for i in 0..<20 { try big.addMethod(Selector("g\(i)")) { (_: ObjectRef) in i } }
        let obj = try big.createInstance()
        // Growing retires caches without collecting them (lookups never collect).
        for i in 0..<20 { XCTAssertEqual(try obj.send(Selector("g\(i)")) as Int, i) }
        let fresh = try RuntimeClass(name: uniqueName("Fresh"))
        let finished = finishes(within: 20) {
            _ = fresh.responds(to: "anything")
            _ = sf_class_getMethodImplementation(fresh.raw, Selector("anything").raw)
        }
        XCTAssertTrue(finished, "a probe of the empty cache spun forever")
    }

    func testFlushKeepsTheCacheAndEmptiesIt() throws {
        let cls = try RuntimeClass(name: uniqueName())
        for i in 0..<4 { try cls.addMethod(Selector("f\(i)")) { (_: ObjectRef) in i } }
        let obj = try cls.createInstance()
        for i in 0..<4 { _ = try obj.send(Selector("f\(i)")) as Int }
        let seq = sf_class_cache_seq(cls.raw)
        XCTAssertEqual(sf_class_cache_occupied(cls.raw), 4)
        try cls.addMethod("f4") { (_: ObjectRef) in 4 }
        XCTAssertEqual(sf_class_cache_occupied(cls.raw), 0, "adding a method flushes")
        XCTAssertEqual(sf_class_cache_seq(cls.raw), seq &+ 2, "a flush is one even-to-even seqlock step")
        XCTAssertNil(sf_cache_probe(cls.raw, Selector("f0").raw))
        XCTAssertEqual(try obj.send("f0") as Int, 0)
        XCTAssertNotNil(sf_cache_probe(cls.raw, Selector("f0").raw))
    }

    func testCLookupSeesReplacements() throws {
        let cls = try RuntimeClass(name: uniqueName())
        try cls.addMethod("v") { (_: ObjectRef) in 1 }
        let obj = try cls.createInstance()
        let sel = Selector("v")
        typealias Fn = @convention(c) (sf_id, sf_sel) -> Int
        XCTAssertEqual(unsafeBitCast(sf_msg_lookup(obj.raw, sel.raw)!, to: Fn.self)(obj.raw, sel.raw), 1)
        try cls.replaceMethod("v") { (_: ObjectRef) in 2 }
        XCTAssertEqual(unsafeBitCast(sf_msg_lookup(obj.raw, sel.raw)!, to: Fn.self)(obj.raw, sel.raw), 2)
        let viaC = sf_class_getMethodImplementation(cls.raw, sel.raw).map { unsafeBitCast($0, to: UnsafeRawPointer.self) }
        XCTAssertEqual(viaC, cls.ownMethod(for: sel)!.implementation.address)
    }

    // MARK: - Concurrency

    /// Eight threads send through every path while another thread replaces implementations,
    /// adds and removes a shadowing override, and adds methods that flush and grow the caches.
    /// Every result must come from an implementation that was installed at some point, and a
    /// thread never sees an older replacement after a newer one.
    func testConcurrentSendsWhileMethodsChange() throws {
        let base = try RuntimeClass(name: uniqueName("Base"))
        let sub = try RuntimeClass(name: uniqueName("Sub"), superclass: base)
        let startClosures = Runtime.liveClosureCount
        let startObjects = Runtime.liveObjectCount
        let generations = 500
        let shadowCycles = 120
        let extras = 60
        try base.addMethod("value") { (_: ObjectRef) in 1_000_000 }
        try base.addMethod("scaled:") { (_: ObjectRef, x: Double) in x }
        try base.addMethod("shadow") { (_: ObjectRef) in 1 }
        let obj = try sub.createInstance()

        let writerDone = Atomic<Bool>(false)
        let failures = Atomic<Int>(0)
        let sends = Atomic<Int>(0)
        let firstFailure = Mutex<String?>(nil)
        @Sendable func fail(_ message: String) {
            failures.add(1, ordering: .relaxed)
            firstFailure.withLock { if $0 == nil { $0 = message } }
        }
        let valueSel = Selector("value")

        runThreads(9) { t in
            if t == 8 {
                // The writer. Every replacement is retired and, past its grace period, freed by
                // the collection that each install runs.
                var shadowOn = false
                var cycles = 0
                var extra = 0
                do {
                    for g in 1...generations {
                        try base.replaceMethod("value") { (_: ObjectRef) in 1_000_000 + g }
                        try base.replaceMethod("scaled:") { (_: ObjectRef, x: Double) in x + Double(g) }
                        if g % 2 == 0, cycles < shadowCycles {
                            if shadowOn { try sub.removeMethod("shadow"); cycles += 1 } else { try sub.addMethod("shadow") { (_: ObjectRef) in 2 } }
                            shadowOn.toggle()
                        }
                        if g % 5 == 0, extra < extras {
                            let k = extra
                            try base.addMethod(Selector("extra\(k)")) { (_: ObjectRef) in k }
                            extra += 1
                        }
                    }
                } catch {
                    fail("writer: \(error)")
                }
                writerDone.store(true, ordering: .releasing)
                return
            }
            var lastValue = 0
            var lastScaled = 0.0
            var n = 0
            while !writerDone.load(ordering: .acquiring) || n < 200 {
                n += 1
                do {
                    let v: Int
                    switch (t + n) % 3 {
                    case 0: v = try obj.send(valueSel) as Int
                    case 1: v = try obj.send(valueSel).intValue ?? -1
                    default:
                        // A raw IMP may be replaced and freed concurrently: a C caller that races
                        // writers holds a read-side section from lookup to the end of the call.
                        sf_rcu_enter()
                        defer { sf_rcu_exit() }
                        let imp = sf_msg_lookup(obj.raw, valueSel.raw)
                        guard let imp else { fail("C lookup returned NULL"); continue }
                        v = unsafeBitCast(imp, to: (@convention(c) (sf_id, sf_sel) -> Int).self)(obj.raw, valueSel.raw)
                    }
                    if v < 1_000_000 || v > 1_000_000 + generations { fail("value returned garbage \(v)") }
                    if v < lastValue { fail("value went back from \(lastValue) to \(v)") }
                    lastValue = v

                    let s: Double = try obj.send("scaled:", 0.5)
                    if s != s.rounded(.down) + 0.5 || s < 0.5 || s > Double(generations) + 0.5 { fail("scaled returned garbage \(s)") }
                    if s < lastScaled { fail("scaled went back from \(lastScaled) to \(s)") }
                    lastScaled = s

                    let shadow = try obj.send("shadow") as Int
                    if shadow != 1, shadow != 2 { fail("shadow returned garbage \(shadow)") }

                    let k = n % extras
                    do {
                        let e: Int = try obj.send(Selector("extra\(k)"))
                        if e != k { fail("extra\(k) returned \(e)") }
                    } catch RuntimeError.doesNotRecognizeSelector {
                        // Not added yet.
                    }
                } catch {
                    fail("thread \(t): \(error)")
                }
            }
            sends.add(n, ordering: .relaxed)
        }

        XCTAssertEqual(failures.load(ordering: .relaxed), 0, firstFailure.withLock { $0 } ?? "")
        XCTAssertGreaterThanOrEqual(sends.load(ordering: .relaxed), 8 * 200)
        print("concurrent sends: \(sends.load(ordering: .relaxed)) rounds across 8 threads")
        XCTAssertEqual(try obj.send("value") as Int, 1_000_000 + generations)
        XCTAssertEqual(try obj.send("scaled:", 0.5) as Double, Double(generations) + 0.5)
        XCTAssertEqual(try obj.send("shadow") as Int, 1)

        // With every reader gone, everything replaced or removed is freed.
        Runtime.state.collectGarbage()
        XCTAssertEqual(Runtime.state.retiredCount, 0)
        XCTAssertEqual(Runtime.state.retiredCount, 0, "caches retired by growth are on the one retired list")
        XCTAssertEqual(Runtime.liveClosureCount, startClosures + 3 + extras, "only the installed closures remain")
        XCTAssertEqual(Runtime.liveObjectCount, startObjects + 1)
    }
}
