// Per-object hooks without a class per object. Every instance with hooks of its own
// shares one hidden subclass of its class; the promises of per-object hooks are kept.
import TestSupport
import CDynamicRuntime
import Dispatch
import XCTest
@testable import DynamicRuntime

final class PerObjectHookTests: XCTestCase {
    private func makeValued(_ base: String) throws -> RuntimeClass {
        let cls = try makeClass(base, ivars: [("tag", .int64)])
        try cls.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        try cls.addMethod("other") { (_: ObjectRef) in 7 }
        return cls
    }

    func testObjectsOfOneClassShareOneHiddenClassAndReportTheirOwn() throws {
        let cls = try makeValued("PerObjectShared")
        let original = cls.ownMethod(for: "value:")!.implementation
        let objects = try (0..<4).map { _ in try cls.createInstance() }
        let plain = try cls.createInstance()
        let tokens = try objects.enumerated().map { i, o in
            try o.hook("value:", .after) { ctx in try ctx.setReturnValue(try ctx.returnValue(as: Int.self) * 10 + i) }
        }
        let isas = Set(objects.map { UInt(bitPattern: sf_object_isa($0.raw)) })
        XCTAssertEqual(isas.count, 1, "one hidden class for all")
        XCTAssertNotEqual(isas.first, UInt(bitPattern: cls.raw))
        for (i, o) in objects.enumerated() {
            XCTAssertEqual(try o.send("value:", 1) as Int, 20 + i, "each object runs its own chain")
            XCTAssertEqual(try o.send("other") as Int, 7, "unhooked selectors go straight to the class")
            // The visible class everywhere.
            XCTAssertEqual(o.runtimeClass, cls)
            XCTAssertEqual(sf_object_getClass(o.raw), cls.raw)
            XCTAssertEqual(String(cString: sf_class_getName(sf_object_getClass(o.raw))), cls.name)
            XCTAssertTrue(o.isKind(of: cls))
        }
        XCTAssertEqual(try plain.send("value:", 1) as Int, 2, "other instances are untouched")
        XCTAssertEqual(sf_object_isa(plain.raw), cls.raw)
        XCTAssertFalse(RuntimeClass.allClasses.contains { $0.name.contains("#") }, "the hidden class has no public name")
        // Errors name the visible class and the real selector.
        let error = thrownError { _ = try objects[0].send("value:", 1.5) as Double }
        XCTAssertNotNil(error)
        XCTAssertTrue(error.map { "\($0)" }?.contains("-[\(cls.name) value:]") ?? false, "\(String(describing: error))")
        XCTAssertFalse(error.map { "\($0)" }?.contains("#") ?? true)

        // The last hook of an object goes: its exact class comes back; the others keep theirs.
        XCTAssertTrue(tokens[0].remove())
        XCTAssertEqual(sf_object_isa(objects[0].raw), cls.raw, "restored exactly")
        XCTAssertEqual(try objects[0].send("value:", 1) as Int, 2)
        XCTAssertEqual(try objects[1].send("value:", 1) as Int, 21)
        for t in tokens.dropFirst() { XCTAssertTrue(t.remove()) }
        for o in objects { XCTAssertEqual(sf_object_isa(o.raw), cls.raw) }
        XCTAssertEqual(cls.ownMethod(for: "value:")!.implementation, original, "the class's own table is untouched")
    }

    func testSuperCallsThroughAnObjectHookedInASubclass() throws {
        let (base, sub) = try makeSuperCallingPair("PerObjectSuper")
        let s = try sub.createInstance()
        let log = Locked<[String]>([])
        let tb = try base.hook("value:", .before) { _ in log.withLock { $0.append("base") } }
        let to = try s.hook("value:", .before) { _ in log.withLock { $0.append("object") } }
        XCTAssertEqual(try s.send("value:", 1) as Int, 1011)
        XCTAssertEqual(log.current, ["object", "base"], "the object's hook once, the super call reaches the base hook")
        [tb, to].forEach { $0.remove() }
        XCTAssertEqual(sf_object_isa(s.raw), sub.raw)
    }

    func testAClassWithHookedObjectsCanBeDisposedOnceTheyAreGone() throws {
        let cls = try makeValued("PerObjectDispose")
        fwdCollect()
        let closures = Runtime.liveClosureCount
        do {
            let kept = try cls.createInstance()
            let a = try cls.createInstance()
            try a.hook("value:", .before) { _ in }
            let t = try kept.hook("other", .before) { _ in }
            XCTAssertTrue(t.remove())
            XCTAssertThrowsError(try cls.dispose(), "instances are alive")
        }
        fwdCollect()
        XCTAssertEqual(Runtime.liveClosureCount, closures, "the hidden class's entries went with their last object")
        XCTAssertNoThrow(try cls.dispose())
    }

    func testManyObjectsHookedAndUnhookedLeaveNothingBehind() throws {
        let cls = try makeValued("PerObjectMany")
        fwdCollect()
        let closures = Runtime.liveClosureCount
        let objects = try (0..<2000).map { _ in try cls.createInstance() }
        let tokens = try objects.map { o in try o.hook("value:", .instead) { ctx in try ctx.proceed() } }
        XCTAssertEqual(Runtime.liveClosureCount, closures + 1, "one trampoline for all the objects")
        XCTAssertEqual(try objects[1999].send("value:", 1) as Int, 2)
        for t in tokens { XCTAssertTrue(t.remove()) }
        fwdCollect()
        XCTAssertEqual(Runtime.liveClosureCount, closures)
        for o in objects { XCTAssertEqual(sf_object_isa(o.raw), cls.raw) }
    }
}

/// Objects of one class hooked and unhooked from 8 threads while others are created, sent to
/// and released, and a class hook comes and goes (run under TSan in CI).
final class PerObjectHookConcurrencyTests: XCTestCase {
    func testEightThreadsHookAndUnhookObjectsOfOneClass() throws {
        let cls = try makeClass("PerObjectConcurrency")
        try cls.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        fwdCollect()
        let closures = Runtime.liveClosureCount
        let shared = try (0..<16).map { _ in try cls.createInstance() }
        nonisolated(unsafe) let sharedRaw = shared.map(\.raw)
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            do {
                for round in 0..<60 {
                    // Objects of this thread's own: hooked, sent, some released still hooked.
                    let mine = try (0..<4).map { _ in try cls.createInstance() }
                    let counts = Locked([0, 0, 0, 0])
                    let tokens = try mine.enumerated().map { i, o in
                        try o.hook("value:", .after) { ctx in
                            counts.withLock { $0[i] += 1 }
                            try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 100)
                        }
                    }
                    for o in mine where try o.send("value:", 1) as Int != 102 { failures.withLock { $0.append("own hook") } }
                    if counts.current != [1, 1, 1, 1] { failures.withLock { $0.append("counts \(counts.current)") } }
                    for (i, tok) in tokens.enumerated() where i % 2 == 0 { _ = tok.remove() }
                    for (i, o) in mine.enumerated() {
                        let r: Int = try o.send("value:", 1)
                        if r != (i % 2 == 0 ? 2 : 102) { failures.withLock { $0.append("after remove \(i): \(r)") } }
                    }
                    // Shared objects: every thread adds and removes a hook of its own on one.
                    let s = ObjectRef(sharedRaw[(t + round) % sharedRaw.count])
                    let tok = try s.hook("value:", .before) { _ in }
                    let r: Int = try s.send("value:", 1)
                    if r != 2 { failures.withLock { $0.append("shared \(r)") } }
                    if !tok.remove() { failures.withLock { $0.append("shared remove") } }
                    if t == 0 {
                        let c = try cls.hook("value:", .instead) { ctx in try ctx.proceed() }
                        _ = try ObjectRef(sharedRaw[0]).send("value:", 1) as Int
                        c.remove()
                    }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        XCTAssertEqual(failures.current, [])
        for o in shared {
            XCTAssertEqual(sf_object_isa(o.raw), cls.raw, "every object got its exact class back")
            XCTAssertEqual(o.hooks(), [])
        }
        fwdCollect()
        XCTAssertEqual(Runtime.liveClosureCount, closures, "no trampoline left behind")
    }
}
