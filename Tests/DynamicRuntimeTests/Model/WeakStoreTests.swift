import CDynamicRuntime
import TestSupport
import XCTest
@testable import DynamicRuntime

/// Weak references re-pointed in place, copied and moved (objc4 test/arr-weak.m and
/// test/weakcopy.m, re-expressed), weak ivars zeroed with their object, and the ivar layouts
/// that say which words are strong and which weak (objc4's class_getIvarLayout format).
final class WeakStoreTests: XCTestCase {
    private var cls: RuntimeClass!

    override func setUpWithError() throws {
        cls = try RuntimeClass(name: uniqueClassName("WeakStore"))
    }

    func testStoreRePointsTheReferenceInPlace() throws {
        var first: Object? = try cls.createInstance()
        let second = try cls.createInstance()
        let weak = try WeakReference(first!)
        XCTAssertEqual(weak.object, first)
        XCTAssertTrue(try weak.store(second))
        XCTAssertEqual(weak.object, second)
        first = nil
        XCTAssertEqual(weak.object, second, "the old referent's deallocation leaves a re-pointed reference alone")
        weak.object = nil
        XCTAssertNil(weak.object)
        weak.object = second
        XCTAssertEqual(weak.object, second)
        XCTAssertEqual(second.retainCount, 1, "a weak store does not retain")
    }

    func testAnObjectBeingDeallocatedIsStoredAsNil() throws {
        // arr-weak.m: an object that stores itself weakly from its dealloc gets nil back.
        let weak = WeakReference()
        let stored = Locked<Bool?>(nil)
        let loadedInDealloc = Locked<Bool?>(nil)
        do {
            let o = try cls.createInstance()
            XCTAssertNotNil(o.onDeallocate { dying in
                stored.withLock { $0 = (try? weak.store(dying)) ?? false }
                loadedInDealloc.withLock { $0 = weak.object != nil }
            })
        }
        XCTAssertEqual(stored.withLock { $0 }, false)
        XCTAssertEqual(loadedInDealloc.withLock { $0 }, false)
        XCTAssertNil(weak.object)
    }

    func testCopyAndMove() throws {
        // weakcopy.m: a copied weak field refers to the same object and both go nil together.
        var o: Object? = try cls.createInstance()
        let original = try WeakReference(o!)
        let copy = WeakReference(copying: original)
        XCTAssertEqual(copy.object, o)
        let moved = WeakReference(moving: original)
        XCTAssertNil(original.object, "a moved-from reference refers to nothing")
        XCTAssertEqual(moved.object, o)
        original.object = o
        o = nil
        XCTAssertNil(original.object)
        XCTAssertNil(copy.object)
        XCTAssertNil(moved.object)
        XCTAssertNil(WeakReference(copying: copy).object, "copying a zeroed reference")
    }

    func testCStoreCopyMoveAndTheTableForgetsRePointedSlots() throws {
        let slots = UnsafeMutablePointer<sf_id?>.allocate(capacity: 3)
        defer { slots.deallocate() }
        slots.initialize(repeating: nil, count: 3)
        var a: Object? = try cls.createInstance()
        let b = try cls.createInstance()
        let aRaw = a!.raw
        XCTAssertEqual(sf_storeWeak(slots, aRaw), aRaw)
        XCTAssertTrue(WeakTable.shared.isRegistered(slots, for: aRaw))
        XCTAssertEqual(sf_storeWeak(slots, b.raw), b.raw)
        XCTAssertFalse(WeakTable.shared.isRegistered(slots, for: aRaw), "re-pointing unregisters the slot from the old object")
        sf_copyWeak(slots + 1, slots)
        sf_moveWeak(slots + 2, slots + 1)
        XCTAssertNil(slots[1])
        XCTAssertEqual(sf_loadWeakRetained(slots + 2), b.raw)
        sf_release(b.raw)
        a = nil
        XCTAssertEqual(sf_loadWeakRetained(slots), b.raw)
        sf_release(b.raw)
        XCTAssertNil(sf_storeWeak(slots, nil))
        sf_destroyWeak(slots + 2)
        XCTAssertFalse(WeakTable.shared.isRegistered(slots + 2, for: b.raw))

        XCTAssertNil(sf_storeWeak(nil, b.raw))
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        sf_copyWeak(nil, slots)
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        sf_moveWeak(slots, nil)
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
    }

    func testAWeakIvarIsZeroedWhenItsObjectGoesAndUnregisteredWithItsOwner() throws {
        let owner = try RuntimeClass.allocate(name: uniqueClassName("WeakOwner"))
        try owner.addIvar("strongFriend", type: .object)
        let ivar = try owner.addWeakIvar("delegate")
        owner.register()
        XCTAssertTrue(ivar.isWeak)
        XCTAssertEqual(owner.ivar(named: "delegate")?.isWeak, true)
        XCTAssertEqual(owner.ivar(named: "strongFriend")?.isWeak, false)

        var target: Object? = try cls.createInstance()
        let targetRaw = target!.raw
        var o: Object? = try owner.createInstance()
        XCTAssertNil(try o!.value(ofIvar: "delegate") as Object?)
        try o!.setValue(target!, forIvar: "delegate")
        XCTAssertEqual(target!.retainCount, 1, "a weak ivar does not retain")
        XCTAssertEqual(try o!.value(ofIvar: "delegate") as Object?, target)
        target = nil
        XCTAssertNil(try o!.value(ofIvar: "delegate") as Object?)
        XCTAssertThrowsError(try o!.value(ofIvar: "delegate") as Object) { error in
            guard case let .invalidArgument(c)? = error as? RuntimeError else { return XCTFail("\(error)") }
            XCTAssertEqual(c.className, owner.name)
            XCTAssertEqual(c.ivar, "delegate")
            XCTAssertEqual(c.actual, "nil")
        }
        _ = targetRaw

        // The owner goes first: its slot leaves the table, so the target's later
        // deallocation writes into no freed memory (ASan would report it).
        let survivor = try cls.createInstance()
        try o!.setValue(survivor, forIvar: "delegate")
        let slot = try XCTUnwrap(sf_object_getIvarPointer(o!.raw, ivar.offset)).assumingMemoryBound(to: sf_id?.self)
        XCTAssertTrue(WeakTable.shared.isRegistered(slot, for: survivor.raw))
        o = nil
        XCTAssertFalse(WeakTable.shared.isRegistered(slot, for: survivor.raw))
    }

    func testAWeakIvarRefusesOtherTypesAndLateDeclaration() throws {
        let owner = try RuntimeClass.allocate(name: uniqueClassName("WeakLate"))
        try owner.addWeakIvar("delegate")
        XCTAssertThrowsError(try owner.addWeakIvar("delegate")) { error in
            guard case let .invalidArgument(c)? = error as? RuntimeError else { return XCTFail("\(error)") }
            XCTAssertEqual(c.ivar, "delegate")
        }
        owner.register()
        XCTAssertThrowsError(try owner.addWeakIvar("late")) { error in
            guard case .classAlreadyRegistered? = error as? RuntimeError else { return XCTFail("\(error)") }
        }
        let o = try owner.createInstance()
        XCTAssertThrowsError(try o.setValue(3, forIvar: "delegate")) { error in
            guard case let .signatureMismatch(c)? = error as? RuntimeError else { return XCTFail("\(error)") }
            XCTAssertEqual(c.expected, "@")
        }
    }

    func testIvarLayoutsInObjc4Format() throws {
        let base = try RuntimeClass.allocate(name: uniqueClassName("LayoutBase"))
        try base.addIvar("a", type: .object)       // word 1 (word 0 is the isa; 8-byte header)
        try base.addIvar("n", type: .int64)        // word 2
        try base.addWeakIvar("w")                  // word 3
        base.register()
        let sub = try RuntimeClass.allocate(name: uniqueClassName("LayoutSub"), superclass: base)
        try sub.addIvar("b", type: .object)        // word 4
        try sub.addIvar("c", type: .object)        // word 5
        sub.register()
        let word = { (c: RuntimeClass, name: String) in c.ivar(named: name)!.offset / 8 }
        let strongWords = [word(sub, "a"), word(sub, "b"), word(sub, "c")]
        XCTAssertEqual(Self.decode(sub.ivarLayout), Set(strongWords))
        XCTAssertEqual(Self.decode(sub.weakIvarLayout), [word(sub, "w")])
        XCTAssertEqual(Self.decode(base.ivarLayout), [word(base, "a")])
        XCTAssertEqual(try RuntimeClass(name: uniqueClassName("LayoutNone")).ivarLayout, [])

        // Runs longer than a nibble take several bytes; skips likewise.
        XCTAssertEqual(RuntimeClass.layout(of: (1...20).map { $0 * 8 }), [0x1F, 0x05])
        XCTAssertEqual(RuntimeClass.layout(of: [17 * 8]), [0xF0, 0x21])
        XCTAssertEqual(RuntimeClass.layout(of: [8, 24]), [0x11, 0x11])

        // From C: the same bytes, NUL-terminated, stable; NULL when there are none.
        let c = try XCTUnwrap(sf_class_getIvarLayout(sub.raw))
        XCTAssertEqual(Array(UnsafeBufferPointer(start: c, count: strlen(UnsafeRawPointer(c).assumingMemoryBound(to: CChar.self)))), sub.ivarLayout)
        XCTAssertEqual(sf_class_getIvarLayout(sub.raw), c)
        XCTAssertNotNil(sf_class_getWeakIvarLayout(sub.raw))
        XCTAssertNil(sf_class_getWeakIvarLayout(cls.raw))
        XCTAssertEqual(sf_last_error(), SF_OK)
        XCTAssertNil(sf_class_getIvarLayout(nil))
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
    }

    func testSetClassRequiresWeakIvarsAtTheSameOffsets() throws {
        let strong = try RuntimeClass(name: uniqueClassName("SetStrong"), ivars: [("x", .object)])
        let weakClass = try RuntimeClass.allocate(name: uniqueClassName("SetWeak"))
        try weakClass.addWeakIvar("x")
        weakClass.register()
        let o = try strong.createInstance()
        XCTAssertThrowsError(try o.setClass(weakClass)) { error in
            guard case .incompatibleClass? = error as? RuntimeError else { return XCTFail("\(error)") }
        }
        let w = try weakClass.createInstance()
        let twin = try weakClass.duplicate(named: uniqueClassName("SetWeakTwin"))
        XCTAssertEqual(try w.setClass(twin), weakClass, "a duplicate keeps the weak layout")
        _ = try w.setClass(weakClass)
    }

    /// The words a layout marks, decoded the way objc4's isScanned walks it.
    private static func decode(_ layout: [UInt8]) -> Set<Int> {
        var words = Set<Int>()
        var index = 0
        for byte in layout {
            index += Int(byte >> 4)
            for _ in 0..<Int(byte & 0x0F) { words.insert(index); index += 1 }
        }
        return words
    }
}
