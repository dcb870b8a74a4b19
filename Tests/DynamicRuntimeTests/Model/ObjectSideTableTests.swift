// Bench case 11e: an object's side table goes when nothing needs it any more (its last hook,
// association or dealloc observer), so an object hooked and unhooked costs what a plain one
// does; what still needs the table survives a hook's removal.
import TestSupport
import CDynamicRuntime
import Dispatch
import XCTest
@testable import DynamicRuntime

final class ObjectSideTableTests: XCTestCase {
    private func makeValued(_ base: String) throws -> RuntimeClass {
        let cls = try makeClass(base)
        try cls.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        try cls.addMethod("other") { (_: ObjectRef) in 7 }
        return cls
    }

    func testTheSideTableGoesWithTheLastHook() throws {
        let cls = try makeValued("SideTableLastHook")
        let o = try cls.createInstance()
        XCTAssertNil(sf_object_side(o.raw), "a plain object has none")
        let a = try o.hook("value:", .after) { ctx in try ctx.setReturnValue(try ctx.returnValue(as: Int.self) * 10) }
        let b = try o.hook("other", .instead) { ctx in try ctx.setReturnValue(8) }
        XCTAssertNotNil(sf_object_side(o.raw))
        XCTAssertTrue(a.remove())
        XCTAssertNotNil(sf_object_side(o.raw), "one hook is left")
        XCTAssertEqual(try o.send("other") as Int, 8)
        XCTAssertTrue(b.remove())
        XCTAssertNil(sf_object_side(o.raw), "gone with the last hook")
        XCTAssertEqual(sf_object_isa(o.raw), cls.raw, "the exact class is back")
        XCTAssertEqual(try o.send("value:", 1) as Int, 2)
        XCTAssertEqual(try o.send("other") as Int, 7)
        XCTAssertFalse(b.isActive)
        XCTAssertFalse(b.remove(), "a token of the dropped table stays harmless")

        // Hooked again: a new table, and the old tokens still do nothing.
        let c = try o.hook("value:", .after) { ctx in try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 100) }
        XCTAssertEqual(try o.send("value:", 1) as Int, 102)
        XCTAssertFalse(a.remove())
        XCTAssertTrue(c.isActive)
        XCTAssertEqual(o.hooks().map(\.identifier), [c.identifier])
        XCTAssertTrue(c.remove())
        XCTAssertNil(sf_object_side(o.raw))
    }

    func testAssociationsObserversAndWeakReferencesSurviveAHooksRemoval() throws {
        let cls = try makeValued("SideTableSurvives")
        let valueClass = try makeClass("SideTableValue")
        let key = AssociationKey("side.survives")
        let objectKey = AssociationKey("side.survives.object")
        let observed = Locked(0)
        let freedValue = Locked(false)
        do {
            let o = try cls.createInstance()
            let weak = try WeakReference(o)
            // Hook first, then the rest: the hook's table becomes theirs.
            let t = try o.hook("value:", .before) { _ in }
            o.setAssociatedValue("kept", for: key)
            do {
                let value = try valueClass.createInstance()
                value.onDeallocate { _ in freedValue.withLock { $0 = true } }
                o.setAssociatedValue(value, for: objectKey)
            }
            o.onDeallocate { _ in observed.withLock { $0 += 1 } }
            XCTAssertTrue(t.remove())
            XCTAssertNotNil(sf_object_side(o.raw), "still needed by the associations and the observer")
            XCTAssertEqual(sf_object_isa(o.raw), cls.raw)
            XCTAssertEqual(o.associatedValue(for: key) as? String, "kept")
            XCTAssertNotNil(o.associatedValue(for: objectKey) as? Object)
            XCTAssertEqual(weak.object?.raw, o.raw, "a weak reference survives too")
            XCTAssertFalse(freedValue.current)

            // And the other way round: associations first, then a hook that comes and goes.
            let u = try o.hook("other", .after) { _ in }
            XCTAssertTrue(u.remove())
            XCTAssertEqual(o.associatedValue(for: key) as? String, "kept")
            XCTAssertEqual(observed.current, 0)
        }
        XCTAssertEqual(observed.current, 1, "the observer ran at dealloc")
        XCTAssertTrue(freedValue.current, "the retained association was released at dealloc")
    }

    func testTheTableGoesWithTheLastAssociationOrObserver() throws {
        let cls = try makeValued("SideTableLastUse")
        let o = try cls.createInstance()
        let key = AssociationKey("side.last")
        o.setAssociatedValue(1, for: key)
        let token = o.onDeallocate { _ in XCTFail("removed") }!
        o.setAssociatedValue(nil, for: key)
        XCTAssertNotNil(sf_object_side(o.raw), "the observer still needs it")
        XCTAssertTrue(o.removeDeallocObserver(token))
        XCTAssertNil(sf_object_side(o.raw))
        XCTAssertFalse(o.removeDeallocObserver(token))

        o.setAssociatedValue(2, for: key)
        o.removeAssociatedValues()
        XCTAssertNil(sf_object_side(o.raw))
        XCTAssertNil(o.associatedValue(for: key))

        // From C, and with a hook that outlives the association.
        let value = try cls.createInstance()
        sf_setAssociatedObject(o.raw, key.rawKey, value.raw)
        let t = try o.hook("value:", .before) { _ in }
        sf_setAssociatedObject(o.raw, key.rawKey, nil)
        XCTAssertNotNil(sf_object_side(o.raw), "the hook still needs it")
        XCTAssertEqual(try o.send("value:", 1) as Int, 2)
        XCTAssertTrue(t.remove())
        XCTAssertNil(sf_object_side(o.raw))

        // A class object keeps its table: it goes with the class.
        cls.setAssociatedValue(3, for: key)
        cls.setAssociatedValue(nil, for: key)
        XCTAssertNotNil(sf_object_side(sf_class_as_object(cls.raw)))
    }

    func testAnObjectDeallocatedWithItsHooksLeavesNothingBehind() throws {
        let cls = try makeValued("SideTableDealloc")
        fwdCollect()
        let closures = Runtime.liveClosureCount
        let live = sf_class_live_instances(cls.raw)
        var tokens: [HookToken] = []
        do {
            let o = try cls.createInstance()
            tokens.append(try o.hook("value:", .before) { _ in })
            o.setAssociatedValue("x", for: AssociationKey("side.dealloc"))
        }
        XCTAssertEqual(sf_class_live_instances(cls.raw), live)
        XCTAssertFalse(tokens[0].isActive)
        XCTAssertFalse(tokens[0].remove())
        fwdCollect()
        XCTAssertEqual(Runtime.liveClosureCount, closures)
    }
}

/// Side tables made and dropped from 8 threads: hooks, associations and observers come and go
/// on shared objects while sends run, and tokens are removed while other threads release the
/// objects (run under TSan in CI).
final class ObjectSideTableConcurrencyTests: XCTestCase {
    func testEightThreadsMakeAndDropSideTablesOfSharedObjects() throws {
        let cls = try makeClass("SideTableConcurrency")
        try cls.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        let shared = try (0..<8).map { _ in try cls.createInstance() }
        let keep = AssociationKey("side.concurrency.keep")
        shared[0].setAssociatedValue("always", for: keep)
        nonisolated(unsafe) let sharedRaw = shared.map(\.raw)
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            let key = AssociationKey("side.concurrency.\(t)")
            do {
                for round in 0..<200 {
                    let o = ObjectRef(sharedRaw[(t + round) % sharedRaw.count])
                    switch (t + round) % 3 {
                    case 0:
                        let tok = try o.hook("value:", .after) { ctx in try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 100) }
                        let r: Int = try o.send("value:", 1)
                        if r < 102 || (r - 2) % 100 != 0 { failures.withLock { $0.append("hooked \(r)") } }
                        if !tok.remove() { failures.withLock { $0.append("remove") } }
                    case 1:
                        o.setAssociatedValue(round, for: key)
                        let seen = o.associatedValue(for: key) as? Int
                        if seen != round { failures.withLock { $0.append("association lost: \(String(describing: seen))") } }
                        o.setAssociatedValue(nil, for: key)
                    default:
                        guard let tok = o.onDeallocate({ _ in }) else { failures.withLock { $0.append("observer refused") }; break }
                        if !o.removeDeallocObserver(tok) { failures.withLock { $0.append("observer lost") } }
                    }
                    let r: Int = try o.send("value:", 1)
                    if (r - 2) % 100 != 0 { failures.withLock { $0.append("send \(r)") } }
                }
                // Tokens removed while another thread releases their objects.
                for _ in 0..<20 {
                    let made = try (0..<4).map { _ in try cls.createInstance() }
                    let tokens = try made.map { o in try o.hook("value:", .before) { _ in } }
                    nonisolated(unsafe) let raws = made.map { sf_retain($0.raw)! }
                    withExtendedLifetime(made) {}
                    DispatchQueue.concurrentPerform(iterations: 8) { i in
                        if i % 2 == 0 { _ = tokens[i / 2].remove() } else { sf_release(raws[i / 2]) }
                    }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        XCTAssertEqual(failures.current, [])
        XCTAssertEqual(shared[0].associatedValue(for: keep) as? String, "always")
        XCTAssertNotNil(sf_object_side(sharedRaw[0]))
        for o in shared.dropFirst() {
            XCTAssertNil(sf_object_side(o.raw), "nothing needs a table any more")
            XCTAssertEqual(sf_object_isa(o.raw), cls.raw)
        }
        fwdCollect()
    }
}
