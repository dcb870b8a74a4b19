import CDynamicRuntime
import Glibc
import Synchronization
import TestSupport
import XCTest
@testable import DynamicRuntime

/// The packed object header: one word for the count and the flags, the rest out of line.
final class ObjectHeaderTests: XCTestCase {
    private var cls: RuntimeClass!

    override func setUpWithError() throws {
        cls = try RuntimeClass(name: uniqueName(name))
    }

    func testAPlainObjectFitsOneThirtyTwoByteChunk() throws {
        XCTAssertEqual(sf_object_header_size(), 24, "isa, count-and-flags word, side-table pointer")
        XCTAssertEqual(cls.instanceSize, 24)
        // glibc's 32-byte chunk gives 24 usable bytes; a 48-byte chunk would give 40. glibc may
        // hand a 24-byte request a 48-byte chunk it would not split, so one object proves
        // nothing either way; of sixteen, those carved fresh are 32-byte chunks.
        let objects = try (0..<16).map { _ in try cls.createInstance() }
        let smallest = objects.map { sf_object_allocated_size($0.raw) }.min() ?? 0
        XCTAssertGreaterThan(smallest, 0)
        XCTAssertLessThanOrEqual(smallest, 24)
    }

    func testFlagsAndCountShareTheWordWithoutDisturbingEachOther() throws {
        let obj = try cls.createInstance()
        let weak = try WeakReference(obj)
        XCTAssertNotEqual(sf_object_flags(obj.raw) & UInt32(SF_OBJ_HAS_WEAK), 0)
        XCTAssertEqual(obj.retainCount, 1, "setting a flag leaves the count")
        for _ in 0..<1000 { sf_retain(obj.raw) }
        XCTAssertEqual(obj.retainCount, 1001)
        XCTAssertNotEqual(sf_object_flags(obj.raw) & UInt32(SF_OBJ_HAS_WEAK), 0, "counting leaves the flags")
        for _ in 0..<1000 { sf_release(obj.raw) }
        XCTAssertEqual(obj.retainCount, 1)
        XCTAssertEqual(weak.object, obj)
    }

    func testTheLargestCountStillCounts() throws {
        let obj = try cls.createInstance()
        let max = sf_object_max_retain_count()
        sf_object_set_retain_count_for_testing(obj.raw, max - 1)
        sf_retain(obj.raw)
        XCTAssertEqual(sf_object_retainCount(obj.raw), max, "no pin below the limit")
        sf_release(obj.raw)
        XCTAssertEqual(sf_object_retainCount(obj.raw), max - 1)
        sf_object_set_retain_count_for_testing(obj.raw, 1)
        XCTAssertEqual(obj.retainCount, 1)
    }

    func testACountPastTheLimitPinsTheObjectInsteadOfWrapping() throws {
        let key = AssociationKey("header.overflow")
        let deallocated = Atomic<Int>(0)
        let before = Runtime.liveObjectCount
        var obj: Object? = try cls.createInstance()
        let raw = obj!.raw
        let weak = try WeakReference(obj!)
        XCTAssertTrue(obj!.setAssociatedValue("kept", for: key))
        obj!.onDeallocate { _ in deallocated.add(1, ordering: .relaxed) }
        sf_object_set_retain_count_for_testing(raw, sf_object_max_retain_count())
        sf_retain(raw)
        XCTAssertEqual(obj!.retainCount, Int.max, "pinned: reported as immortal")
        XCTAssertNotEqual(sf_object_flags(raw) & UInt32(SF_OBJ_IMMORTAL), 0)
        XCTAssertNotEqual(sf_object_flags(raw) & UInt32(SF_OBJ_HAS_WEAK), 0, "the other flags are kept")
        for _ in 0..<10 { sf_release(raw) }
        obj = nil
        XCTAssertEqual(deallocated.load(ordering: .relaxed), 0, "a pinned object is never freed")
        XCTAssertNotNil(weak.object)
        XCTAssertEqual(Object(retaining: raw).associatedValue(for: key) as? String, "kept")
        // Unpinned by the test only, so the object can go and the leak check stays clean.
        sf_object_set_retain_count_for_testing(raw, 1)
        sf_release(raw)
        XCTAssertEqual(deallocated.load(ordering: .relaxed), 1)
        XCTAssertNil(weak.object)
        XCTAssertEqual(Runtime.liveObjectCount, before)
    }

    func testAWeakLoadOfAPinnedObjectSucceeds() throws {
        let obj = try cls.createInstance()
        let weak = try WeakReference(obj)
        sf_object_set_retain_count_for_testing(obj.raw, sf_object_max_retain_count())
        XCTAssertTrue(sf_try_retain(obj.raw), "the weak load's retain pins the object")
        XCTAssertEqual(obj.retainCount, Int.max)
        XCTAssertNotNil(weak.object)
        sf_object_set_retain_count_for_testing(obj.raw, 1)
        XCTAssertEqual(obj.retainCount, 1)
    }
}
