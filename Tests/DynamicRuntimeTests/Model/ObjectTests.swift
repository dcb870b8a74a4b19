import TestSupport
import CDynamicRuntime
import Synchronization
import XCTest
@testable import DynamicRuntime

final class ObjectTests: XCTestCase {
    private var cls: RuntimeClass!

    override func setUpWithError() throws {
        cls = try RuntimeClass(name: uniqueName(name))
    }

    func testCreateInstanceIsOwnedByTheHandle() throws {
        let before = Runtime.liveObjectCount
        var obj: Object? = try cls.createInstance()
        XCTAssertEqual(obj?.retainCount, 1)
        XCTAssertEqual(Runtime.liveObjectCount, before + 1)
        XCTAssertEqual(sf_class_live_instances(cls.raw), 1)
        XCTAssertTrue(obj?.runtimeClass === cls)
        XCTAssertEqual(sf_object_getClass(obj!.raw), cls.raw)
        obj = nil
        XCTAssertEqual(Runtime.liveObjectCount, before)
        XCTAssertEqual(sf_class_live_instances(cls.raw), 0)
    }

    func testRetainAndReleaseFromC() throws {
        nonisolated(unsafe) var log: [String] = []
        let obj = try cls.createInstance()
        let raw = obj.raw
        obj.onDeallocate { _ in log.append("dealloc") }
        XCTAssertEqual(sf_retain(raw), raw)
        XCTAssertEqual(sf_object_retainCount(raw), 2)
        let second = Object(retaining: raw)
        XCTAssertEqual(obj.retainCount, 3)
        sf_release(raw)
        XCTAssertEqual(obj.retainCount, 2)
        XCTAssertEqual(second, obj, "handles compare by object")
        XCTAssertEqual(Set([second, obj]).count, 1)
        XCTAssertNil(sf_retain(nil))
        sf_release(nil)
        XCTAssertEqual(sf_object_retainCount(nil), 0)
        XCTAssertTrue(log.isEmpty)
        // Dropping the handles inside a closure scope ends the object.
        withExtendedLifetime((obj, second)) {}
    }

    func testObjectRefDoesNotOwn() throws {
        let obj = try cls.createInstance()
        let ref = obj.ref
        XCTAssertEqual(obj.retainCount, 1)
        let strong = try XCTUnwrap(ref.retained())
        XCTAssertEqual(obj.retainCount, 2)
        withExtendedLifetime(strong) {}
        XCTAssertNil(ObjectRef.nil.retained())
        XCTAssertTrue(ObjectRef.nil.isNil)
        XCTAssertEqual(ObjectRef.nil.description, "nil")
        XCTAssertTrue(ref.description.contains(cls.name))
    }

    func testClassObjectsAreImmortal() {
        let classObject = cls.receiver
        XCTAssertEqual(classObject.retainCount, Int.max)
        sf_release(classObject.raw)
        sf_release(classObject.raw)
        XCTAssertEqual(sf_object_retainCount(classObject.raw), UInt.max)
        XCTAssertNil(classObject.onDeallocate { _ in }, "immortal objects are never deallocated")
        XCTAssertTrue(classObject.runtimeClass === cls.metaclass)
    }

    func testDeallocObserversRunOnceInOrder() throws {
        nonisolated(unsafe) var log: [Int] = []
        nonisolated(unsafe) var observed: [sf_id] = []
        var obj: Object? = try cls.createInstance()
        let raw = obj!.raw
        for i in 0..<5 {
            obj!.onDeallocate { o in
                log.append(i)
                observed.append(o.raw!)
            }
        }
        let removed = try XCTUnwrap(obj!.onDeallocate { _ in log.append(-1) })
        XCTAssertTrue(obj!.removeDeallocObserver(removed))
        XCTAssertFalse(obj!.removeDeallocObserver(removed), "a token works once")
        // An extra retain/release pair does not run them.
        sf_retain(raw)
        sf_release(raw)
        XCTAssertTrue(log.isEmpty)
        obj = nil
        XCTAssertEqual(log, [0, 1, 2, 3, 4])
        XCTAssertEqual(observed, Array(repeating: raw, count: 5), "observers see the object itself")
    }

    func testObserversSeeTheObjectIntact() throws {
        let holder = try RuntimeClass(name: uniqueName("Holder"), ivars: [("n", .int64)])
        try holder.addMethod("n") { (self_: ObjectRef) -> Int in
            sf_object_getIvarPointer(self_.raw, holder.ivar(named: "n")!.offset)!.load(as: Int.self)
        }
        let key = AssociationKey()
        nonisolated(unsafe) var seen: (Int, String?)? = nil
        do {
            let obj = try holder.createInstance()
            sf_object_getIvarPointer(obj.raw, holder.ivar(named: "n")!.offset)!.storeBytes(of: 41, as: Int.self)
            obj.setAssociatedValue("assoc", for: key)
            obj.onDeallocate { o in
                seen = ((try? o.send("n") as Int) ?? -1, o.associatedValue(for: key) as? String)
            }
        }
        XCTAssertEqual(seen?.0, 41, "methods can still be sent during dealloc observers")
        XCTAssertEqual(seen?.1, "assoc", "associations are released after the observers")
    }

    func testWeakReferenceReadsNilAfterDealloc() throws {
        var obj: Object? = try cls.createInstance()
        let weak = try WeakReference(obj!)
        let weak2 = try WeakReference(obj!.ref)
        XCTAssertEqual(weak.object, obj)
        XCTAssertEqual(obj?.retainCount, 1, "a weak reference does not retain")
        var loaded: Object? = weak.object
        XCTAssertEqual(obj?.retainCount, 2, "loading gives a strong handle")
        loaded = nil
        _ = loaded
        obj = nil
        XCTAssertNil(weak.object)
        XCTAssertNil(weak2.object)
        XCTAssertNil(try WeakReference(ObjectRef.nil).object)
    }

    func testWeakReferenceDestroyedBeforeItsObject() throws {
        let obj = try cls.createInstance()
        for _ in 0..<100 { _ = try WeakReference(obj).object }
        var weak: WeakReference? = try WeakReference(obj)
        weak = nil
        _ = weak
        XCTAssertEqual(obj.retainCount, 1)
    }

    func testWeakReferenceToAClassNeverClears() throws {
        let weak = try WeakReference(cls)
        XCTAssertEqual(weak.object?.raw, cls.receiver.raw)
    }

    func testWeakReferencesUnderConcurrentLoadsAndRelease() throws {
        // Seven threads load weak references while an eighth drops the only strong ones: a
        // load returns a live, usable object or nil, never a dying one, and whichever thread
        // releases last deallocates.
        try cls.addMethod("alive") { (_: ObjectRef) in 1 }
        let count = 3000
        let before = Runtime.liveObjectCount
        nonisolated(unsafe) var owned: [Object?] = try (0..<count).map { _ in try cls.createInstance() }
        let weaks = try owned.map { try WeakReference($0!) }
        let failures = Atomic<Int>(0)
        runThreads(8) { t in
            if t == 0 {
                for i in 0..<count { owned[i] = nil }
                return
            }
            for i in stride(from: t - 1, to: count, by: 7) {
                guard let o = weaks[i].object else { continue }
                if o.retainCount < 1 || (try? o.send("alive") as Int) != 1 { failures.add(1, ordering: .relaxed) }
            }
        }
        XCTAssertEqual(failures.load(ordering: .relaxed), 0)
        XCTAssertEqual(Runtime.liveObjectCount, before)
        XCTAssertTrue(weaks.allSatisfy { $0.object == nil })
    }

    func testAssociatedObjectsAreRetainedAndReleasedOnDealloc() throws {
        let key = AssociationKey("child")
        nonisolated(unsafe) var log: [String] = []
        var owner: Object? = try cls.createInstance()
        do {
            let child = try cls.createInstance()
            child.onDeallocate { _ in log.append("child") }
            owner!.setAssociatedValue(child, for: key)
            XCTAssertEqual(child.retainCount, 2)
            let back = try XCTUnwrap(owner!.associatedValue(for: key) as? Object)
            XCTAssertEqual(back, child)
        }
        XCTAssertTrue(log.isEmpty, "the association keeps the child alive")
        owner!.onDeallocate { _ in log.append("owner") }
        owner = nil
        XCTAssertEqual(log, ["owner", "child"])
    }

    func testResettingAnAssociationReleasesTheOldValue() throws {
        let key = AssociationKey()
        let owner = try cls.createInstance()
        nonisolated(unsafe) var log: [Int] = []
        for i in 0..<3 {
            let child = try cls.createInstance()
            child.onDeallocate { _ in log.append(i) }
            owner.setAssociatedValue(child, for: key)
        }
        XCTAssertEqual(log, [0, 1])
        owner.setAssociatedValue(nil, for: key)
        XCTAssertEqual(log, [0, 1, 2])
        XCTAssertNil(owner.associatedValue(for: key))
    }

    func testAssociatedSwiftValuesAreReleasedOnDealloc() throws {
        final class Canary: @unchecked Sendable {
            let onDeinit: () -> Void
            init(_ f: @escaping () -> Void) { onDeinit = f }
            deinit { onDeinit() }
        }
        var gone = false
        var obj: Object? = try cls.createInstance()
        obj!.setAssociatedValue(Canary { gone = true }, for: AssociationKey())
        XCTAssertFalse(gone)
        obj = nil
        XCTAssertTrue(gone)
    }

    func testCWeakAndAssociationAPIs() throws {
        var obj: Object? = try cls.createInstance()
        let raw = obj!.raw
        let slot = UnsafeMutablePointer<sf_id?>.allocate(capacity: 1)
        defer { slot.deallocate() }
        sf_initWeak(slot, raw)
        let loaded = sf_loadWeakRetained(slot)
        XCTAssertEqual(loaded, raw)
        XCTAssertEqual(sf_object_retainCount(raw), 2)
        sf_release(loaded)

        let key = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
        defer { key.deallocate() }
        let value = try cls.createInstance()
        sf_setAssociatedObject(raw, key, value.raw)
        XCTAssertEqual(sf_getAssociatedObject(raw, key), value.raw)
        XCTAssertEqual(value.retainCount, 2)

        obj = nil
        XCTAssertNil(sf_loadWeakRetained(slot))
        XCTAssertEqual(value.retainCount, 1, "the association went with its owner")
        sf_destroyWeak(slot)
        sf_initWeak(slot, nil)
        XCTAssertNil(sf_loadWeakRetained(slot))
        sf_destroyWeak(slot)
        sf_initWeak(nil, value.raw)
        XCTAssertNil(sf_loadWeakRetained(nil))
        sf_destroyWeak(nil)
    }
}
