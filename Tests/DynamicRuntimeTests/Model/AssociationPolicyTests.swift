import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// Association policies (objc4 test/association.m, libobjc2 Test/AssociatedObject.m): what
/// each policy holds, what the owner's deallocation releases, removeAssociatedObjects.
final class AssociationPolicyTests: XCTestCase {
    private static let key = AssociationKey("policy")
    private static let other = AssociationKey("other")

    private func values() throws -> RuntimeClass { try RuntimeClass(name: uniqueClassName("APValue")) }

    func testRetainAndAssignAcrossTheOwnersDeallocation() throws {
        let cls = try values()
        let retained = try cls.createInstance()
        let assigned = try cls.createInstance()
        do {
            let owner = try cls.createInstance()
            try owner.setAssociatedObject(retained.ref, for: Self.key, policy: .retainNonatomic)
            try owner.setAssociatedObject(assigned.ref, for: Self.other, policy: .assign)
            XCTAssertEqual(sf_object_retainCount(retained.raw), 2)
            XCTAssertEqual(sf_object_retainCount(assigned.raw), 1, "assign does not retain")
            XCTAssertEqual((owner.associatedValue(for: Self.other) as? Object)?.raw, assigned.raw)
            XCTAssertEqual(sf_getAssociatedObject(owner.raw, Self.key.rawKey), retained.raw)
        }
        XCTAssertEqual(sf_object_retainCount(retained.raw), 1, "released at the owner's deallocation")
        XCTAssertEqual(sf_object_retainCount(assigned.raw), 1, "assign is not released")
    }

    func testAssociationsGoAfterTheDeallocObserversRan() throws {
        let cls = try values()
        let seen = Locked<[String]>([])
        do {
            let value = try cls.createInstance()
            value.onDeallocate { _ in seen.append("value") }
            let owner = try cls.createInstance()
            owner.onDeallocate { me in
                // objc4: the owner's dealloc still sees its associations.
                seen.append(me.associatedValue(for: Self.key) == nil ? "owner: gone" : "owner: present")
            }
            try owner.setAssociatedObject(value.ref, for: Self.key, policy: .retain)
        }
        XCTAssertEqual(seen.current, ["owner: present", "value"])
    }

    func testCopySendsCopyAndAnImmutableValueIsRetained() throws {
        let mutable = try values()
        let copies = Locked(0)
        try mutable.addMethod("copy") { (me: ObjectRef) -> Object? in
            copies.withLock { $0 += 1 }
            return try me.runtimeClass!.createInstance()
        }
        let immutable = try values()
        let owner = try immutable.createInstance()
        let m = try mutable.createInstance()
        try owner.setAssociatedObject(m.ref, for: Self.key, policy: .copy)
        let stored = try XCTUnwrap(owner.associatedValue(for: Self.key) as? Object)
        XCTAssertNotEqual(stored.raw, m.raw, "a copy is stored")
        XCTAssertEqual(copies.current, 1)
        XCTAssertEqual(sf_object_retainCount(m.raw), 1, "the original is not kept")
        let i = try immutable.createInstance()
        try owner.setAssociatedObject(i.ref, for: Self.other, policy: .copyNonatomic)
        XCTAssertEqual(sf_copyAssociatedObject(owner.raw, Self.other.rawKey), i.raw, "no copy: the value itself")
        XCTAssertEqual(sf_object_retainCount(i.raw), 3, "the caller's, the association's and sf_copyAssociatedObject's")
        sf_release(i.raw)
    }

    func testACopyThatThrowsStoresNothing() throws {
        let cls = try values()
        try cls.addMethod("copy") { (_: ObjectRef) throws -> Object? in throw RuntimeError.invalidArgument(.init(className: "x", selector: "copy", reason: "no")) }
        let owner = try cls.createInstance()
        let v = try cls.createInstance()
        XCTAssertThrowsError(try owner.setAssociatedObject(v.ref, for: Self.key, policy: .copy))
        XCTAssertNil(owner.associatedValue(for: Self.key))
    }

    func testRemoveAssociatedObjectsAndResettingReleaseOnlyWhatWasRetained() throws {
        let cls = try values()
        let owner = try cls.createInstance()
        let a = try cls.createInstance(), b = try cls.createInstance(), c = try cls.createInstance()
        try owner.setAssociatedObject(a.ref, for: Self.key, policy: .retain)
        try owner.setAssociatedObject(b.ref, for: Self.key, policy: .retain)
        XCTAssertEqual(sf_object_retainCount(a.raw), 1, "replacing released the old value")
        try owner.setAssociatedObject(c.ref, for: Self.other, policy: .assign)
        owner.setAssociatedValue("swift", for: AssociationKey("s"))
        owner.removeAssociatedValues()
        XCTAssertEqual(sf_object_retainCount(b.raw), 1)
        XCTAssertEqual(sf_object_retainCount(c.raw), 1)
        XCTAssertNil(owner.associatedValue(for: Self.key))
        XCTAssertNil(owner.associatedValue(for: Self.other))
        try owner.setAssociatedObject(a.ref, for: Self.key, policy: .retain)
        try owner.setAssociatedObject(ObjectRef.nil, for: Self.key, policy: .retain)
        XCTAssertEqual(sf_object_retainCount(a.raw), 1, "nil removes and releases")
        sf_removeAssociatedObjects(owner.raw)
        sf_removeAssociatedObjects(nil)
    }

    func testCPolicies() throws {
        let cls = try values()
        let owner = try cls.createInstance()
        let v = try cls.createInstance()
        XCTAssertEqual(sf_setAssociatedObjectWithPolicy(owner.raw, Self.key.rawKey, v.raw, SF_ASSOCIATION_RETAIN_NONATOMIC), SF_OK)
        XCTAssertEqual(sf_object_retainCount(v.raw), 2)
        XCTAssertEqual(sf_setAssociatedObjectWithPolicy(owner.raw, Self.key.rawKey, v.raw, SF_ASSOCIATION_ASSIGN), SF_OK)
        XCTAssertEqual(sf_object_retainCount(v.raw), 1, "the retained value was replaced by an assigned one")
        XCTAssertEqual(sf_setAssociatedObjectWithPolicy(owner.raw, Self.key.rawKey, v.raw, sf_association_policy(rawValue: 2)),
                       SF_ERR_INVALID_ARGUMENT)
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("expected an association policy (0, 1, 3, 01401 or 01403), got 2"))
        XCTAssertEqual(sf_setAssociatedObjectWithPolicy(nil, Self.key.rawKey, v.raw, SF_ASSOCIATION_RETAIN), SF_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(sf_setAssociatedObjectWithPolicy(owner.raw, nil, v.raw, SF_ASSOCIATION_RETAIN), SF_ERR_INVALID_ARGUMENT)
        XCTAssertNil(sf_copyAssociatedObject(owner.raw, Self.other.rawKey))
        XCTAssertEqual(AssociationPolicy.allCases.map(\.rawValue), [0, 1, 3, 0o1401, 0o1403])
        XCTAssertEqual(UInt(SF_ASSOCIATION_COPY.rawValue), AssociationPolicy.copy.rawValue)
    }

    /// Atomic reads race with resets from other threads: the reader always holds a reference.
    func testConcurrencyAtomicGetRacesWithSet() throws {
        let cls = try values()
        let owner = try cls.createInstance()
        let pool = try (0..<4).map { _ in try cls.createInstance() }
        DispatchQueue.concurrentPerform(iterations: 8) { t in
            for i in 0..<2_000 {
                if t % 2 == 0 {
                    try? owner.setAssociatedObject(pool[(i + t) % pool.count].ref, for: Self.key, policy: .retain)
                } else if let o = sf_copyAssociatedObject(owner.raw, Self.key.rawKey) {
                    XCTAssertGreaterThanOrEqual(sf_object_retainCount(o), 2)
                    sf_release(o)
                }
            }
        }
        owner.removeAssociatedValues()
        XCTAssertEqual(pool.map { sf_object_retainCount($0.raw) }, [1, 1, 1, 1])
    }
}
