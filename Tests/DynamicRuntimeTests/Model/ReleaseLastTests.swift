import TestSupport
import CDynamicRuntime
import XCTest
import Synchronization
@testable import DynamicRuntime

/// A value taken out of an object is released only after the runtime is done with the object,
/// because that value may be the object's last owner (objc4's
/// `_object_set_associative_reference` releases the old value last; its test/association.m
/// frees an object from its own association's release). In each test the caller holds only an
/// unowned `ObjectRef` to `a`, and the value it takes out of `a` owns `a`: the removal frees
/// `a`, which ASan turns into a report if the runtime touches `a` afterwards.
final class ReleaseLastTests: XCTestCase {
    private let key = AssociationKey()
    private let back = AssociationKey()

    /// `a` and `b` own each other through associations; returns the unowned `a` and a flag
    /// that `a`'s dealloc observer sets.
    private func cycle(_ name: String) throws -> (a: ObjectRef, b: ObjectRef, freed: FreedFlags) {
        let cls = try RuntimeClass(name: uniqueClassName(name))
        let freed = FreedFlags()
        let a = try cls.createInstance()
        let b = try cls.createInstance()
        a.onDeallocate { _ in freed.a.store(true, ordering: .relaxed) }
        b.onDeallocate { _ in freed.b.store(true, ordering: .relaxed) }
        a.setAssociatedValue(b, for: key)
        b.setAssociatedValue(a, for: back)
        return (a.ref, b.ref, freed)
    }

    final class FreedFlags: Sendable {
        let a = Atomic<Bool>(false)
        let b = Atomic<Bool>(false)
        var both: Bool { a.load(ordering: .relaxed) && b.load(ordering: .relaxed) }
    }

    func testClearingAnAssociationThatOwnsTheObject() throws {
        let baseline = Runtime.liveObjectCount
        let (a, _, freed) = try cycle("RLClear")
        XCTAssertFalse(freed.both)
        XCTAssertTrue(a.setAssociatedValue(nil, for: key))
        XCTAssertTrue(freed.both)
        XCTAssertEqual(Runtime.liveObjectCount, baseline)
    }

    func testReplacingAnAssociationThatOwnsTheObject() throws {
        let baseline = Runtime.liveObjectCount
        let (a, _, freed) = try cycle("RLReplace")
        XCTAssertTrue(a.setAssociatedValue("a Swift value", for: key))
        XCTAssertTrue(freed.both, "the new value went with the object it was stored in")
        XCTAssertEqual(Runtime.liveObjectCount, baseline)
    }

    func testReplacingWithPolicyAndRemovingAll() throws {
        let baseline = Runtime.liveObjectCount
        do {
            let (a, _, freed) = try cycle("RLPolicy")
            let other = try RuntimeClass(name: uniqueClassName("RLPolicyValue")).createInstance()
            try a.setAssociatedObject(other.ref, for: key, policy: .retainNonatomic)
            XCTAssertTrue(freed.both)
        }
        do {
            let (a, _, freed) = try cycle("RLRemoveAll")
            a.removeAssociatedValues()
            XCTAssertTrue(freed.both)
        }
        XCTAssertEqual(Runtime.liveObjectCount, baseline)
    }

    func testTheCFunctions() throws {
        let baseline = Runtime.liveObjectCount
        do {
            let (a, _, freed) = try cycle("RLCClear")
            sf_setAssociatedObject(a.raw, key.rawKey, nil)
            XCTAssertTrue(freed.both)
        }
        do {
            let (a, _, freed) = try cycle("RLCPolicy")
            XCTAssertEqual(sf_setAssociatedObjectWithPolicy(a.raw, key.rawKey, nil, SF_ASSOCIATION_RETAIN), SF_OK)
            XCTAssertTrue(freed.both)
        }
        do {
            let (a, _, freed) = try cycle("RLCRemoveAll")
            sf_removeAssociatedObjects(a.raw)
            XCTAssertTrue(freed.both)
        }
        XCTAssertEqual(Runtime.liveObjectCount, baseline)
    }

    /// A Swift value that owns the object (an `Object` inside a Swift class instance).
    func testASwiftValueThatOwnsTheObject() throws {
        final class Holder: @unchecked Sendable { var object: Object?; init(_ o: Object) { object = o } }
        let baseline = Runtime.liveObjectCount
        let cls = try RuntimeClass(name: uniqueClassName("RLSwift"))
        let freed = FreedFlags()
        let a: ObjectRef
        do {
            let owned = try cls.createInstance()
            owned.onDeallocate { _ in freed.a.store(true, ordering: .relaxed) }
            owned.setAssociatedValue(Holder(owned), for: key)
            a = owned.ref
        }
        XCTAssertFalse(freed.a.load(ordering: .relaxed))
        XCTAssertTrue(a.setAssociatedValue(nil, for: key))
        XCTAssertTrue(freed.a.load(ordering: .relaxed))
        XCTAssertEqual(Runtime.liveObjectCount, baseline)
    }

    /// A dealloc observer whose closure owns the object: removing it frees the object.
    func testRemovingAnObserverThatOwnsTheObject() throws {
        let baseline = Runtime.liveObjectCount
        let cls = try RuntimeClass(name: uniqueClassName("RLObserver"))
        let freed = FreedFlags()
        let a: ObjectRef
        let token: DeallocObserverToken
        do {
            let owned = try cls.createInstance()
            owned.onDeallocate { _ in freed.a.store(true, ordering: .relaxed) }
            // A second table entry keeps the table from being dropped before the last step.
            owned.setAssociatedValue(1, for: back)
            token = try XCTUnwrap(owned.onDeallocate { _ in withExtendedLifetime(owned) {} })
            a = owned.ref
        }
        XCTAssertTrue(a.setAssociatedValue(nil, for: back))
        XCTAssertFalse(freed.a.load(ordering: .relaxed))
        XCTAssertTrue(a.removeDeallocObserver(token))
        XCTAssertTrue(freed.a.load(ordering: .relaxed))
        XCTAssertEqual(Runtime.liveObjectCount, baseline)
    }

    /// An object ivar whose value owns the object.
    func testClearingAnIvarThatOwnsTheObject() throws {
        let baseline = Runtime.liveObjectCount
        let cls = try RuntimeClass(name: uniqueClassName("RLIvar"), ivars: [("next", .object)])
        let freed = FreedFlags()
        let a: ObjectRef
        do {
            let owned = try cls.createInstance()
            let value = try cls.createInstance()
            owned.onDeallocate { _ in freed.a.store(true, ordering: .relaxed) }
            value.onDeallocate { _ in freed.b.store(true, ordering: .relaxed) }
            try owned.setValue(value, forIvar: "next")
            value.setAssociatedValue(owned, for: back)
            a = owned.ref
        }
        try a.setValue(ObjectRef.nil, forIvar: "next")
        XCTAssertTrue(freed.both)
        XCTAssertEqual(Runtime.liveObjectCount, baseline)
    }

    /// An object hook whose closure owns the object: removing the token frees it once the
    /// grace period has passed.
    func testRemovingAHookThatOwnsTheObject() throws {
        let baseline = Runtime.liveObjectCount
        let cls = try RuntimeClass(name: uniqueClassName("RLHook"))
        try cls.addMethod("value") { (_: ObjectRef) -> Int in 1 }
        let freed = FreedFlags()
        let a: ObjectRef
        let token: HookToken
        do {
            let owned = try cls.createInstance()
            owned.onDeallocate { _ in freed.a.store(true, ordering: .relaxed) }
            token = try owned.hook("value", .instead) { call in
                withExtendedLifetime(owned) {}
                try call.proceed()
            }
            a = owned.ref
        }
        XCTAssertEqual(try a.send("value") as Int, 1)
        token.remove()
        Runtime.state.collectGarbage()
        XCTAssertTrue(freed.a.load(ordering: .relaxed))
        XCTAssertEqual(Runtime.liveObjectCount, baseline)
    }
}
