import CDynamicRuntime
import Synchronization
import XCTest
@testable import DynamicRuntime

/// The class of the small objects these tests make, registered once: tags are process-wide and
/// registered for good, and the whole suite shares one process.
enum SmallObjectFixture {
    static let tag = 5
    /// Receives the messages `SmallValue` forwards with `forwardingTarget`.
    static let forwardee: Object = {
        let cls = try! makeClass("SmallForwardee")
        try! cls.addMethod("forwardedPlus:") { (_: ObjectRef, x: Int) in x + 1000 }
        return try! cls.createInstance()
    }()
    static let cls: RuntimeClass = {
        let cls = try! makeClass("SmallValue")
        try! cls.addMethod("payload") { (me: ObjectRef) -> Int in Int(me.taggedPayload ?? 0) }
        try! cls.addMethod("plus:") { (me: ObjectRef, x: Int) -> Int in Int(me.taggedPayload ?? 0) + x }
        try! cls.addMethod("hooked:") { (me: ObjectRef, x: Int) -> Int in Int(me.taggedPayload ?? 0) * x }
        try! cls.addMethod("me") { (me: ObjectRef) -> Object? in me.retained() }
        try! cls.setForwardingTarget { _, sel in sel.name == "forwardedPlus:" ? forwardee.ref : nil }
        try! cls.registerSmallObjectClass(tag: tag)
        return cls
    }()
    static func make(_ payload: UInt) throws -> ObjectRef {
        _ = cls
        return try ObjectRef.tagged(tag: tag, payload: payload)
    }
}

/// Small objects (tagged pointers), re-expressed from libobjc2's Test/SmallObjects (the class
/// registered for a tag, sends read the class from the pointer, retain and release do nothing)
/// and objc4's tagged-pointer tests (objects made from a payload, identity by value, hooks and
/// forwarding as for any instance).
final class SmallObjectTests: XCTestCase {
    func testAPayloadRoundTripsAndIdentityIsTheValue() throws {
        for payload: UInt in [0, 1, 42, 1 << 40, ObjectRef.maxTaggedPayload] {
            let o = try SmallObjectFixture.make(payload)
            XCTAssertTrue(o.isTagged)
            XCTAssertEqual(o.taggedPayload, payload)
            XCTAssertEqual(o.taggedTag, SmallObjectFixture.tag)
            XCTAssertEqual(o.runtimeClass, SmallObjectFixture.cls)
            XCTAssertEqual(try SmallObjectFixture.make(payload), o, "made from the same value, the same object")
        }
        XCTAssertNotEqual(try SmallObjectFixture.make(1), try SmallObjectFixture.make(2))
        XCTAssertEqual(RuntimeClass.smallObjectClass(tag: SmallObjectFixture.tag), SmallObjectFixture.cls)
        XCTAssertEqual(SmallObjectFixture.cls.smallObjectTag, SmallObjectFixture.tag)
        let ordinary = try makeClass("SmallOrdinary").createInstance()
        XCTAssertFalse(ordinary.ref.isTagged)
        XCTAssertNil(ordinary.ref.taggedPayload)
        XCTAssertNil(ordinary.ref.taggedTag)
        XCTAssertNil(ObjectRef.nil.taggedPayload)
    }

    func testSendsReachTheTagsClassCachedTypedAndDynamic() throws {
        let o = try SmallObjectFixture.make(40)
        for _ in 0..<1000 { XCTAssertEqual(try o.send("plus:", 2) as Int, 42) }
        XCTAssertEqual(try o.send("payload") as Int, 40)
        XCTAssertEqual((try o.send("me") as Object?)?.raw, o.raw, "self is the tagged pointer itself")
        XCTAssertTrue(o.responds(to: "plus:"))
        XCTAssertFalse(o.responds(to: "noSuchSelector"))
        guard case .int64(42) = try o.send("plus:", arguments: [2]) else { return XCTFail("the dynamic send") }
        // The C send path: the cached lookup from the pointer's tag.
        typealias F = @convention(c) (sf_id?, sf_sel?, Int64) -> Int64
        let imp = unsafeBitCast(sf_msg_lookup(o.raw, Selector("plus:").raw)!, to: F.self)
        XCTAssertEqual(imp(o.raw, Selector("plus:").raw, 5), 45)
    }

    func testRetainAndReleaseDoNothing() throws {
        let o = try SmallObjectFixture.make(7)
        XCTAssertEqual(sf_object_retainCount(o.raw), UInt.max)
        for _ in 0..<10 { sf_retain(o.raw) }
        for _ in 0..<20 { sf_release(o.raw) }
        XCTAssertEqual(sf_object_retainCount(o.raw), UInt.max)
        XCTAssertEqual(try o.send("payload") as Int, 7, "still an object after more releases than retains")
        do {
            let owned = Object(adopting: o.raw!)
            XCTAssertEqual(try owned.send("payload") as Int, 7)
        }
        XCTAssertEqual(try o.send("payload") as Int, 7, "an owning handle's release left it alone")
        XCTAssertEqual(sf_object_allocated_size(o.raw), 0)
        XCTAssertNil(o.indexedIvars)
    }

    func testClassHooksRunForSmallObjectsAndRemoveExactly() throws {
        let o = try SmallObjectFixture.make(6)
        let seen = Mutex<[UInt]>([])
        let before = try SmallObjectFixture.cls.hook("hooked:", .before) { ctx in
            seen.withLock { $0.append(ctx.target.taggedPayload ?? 99) }
        }
        let instead = try SmallObjectFixture.cls.hook("hooked:", .instead) { ctx in
            try ctx.proceed()
            try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 1)
        }
        XCTAssertEqual(try o.send("hooked:", 7) as Int, 43)
        XCTAssertEqual(try SmallObjectFixture.make(2).send("hooked:", 7) as Int, 15)
        XCTAssertEqual(seen.withLock { $0 }, [6, 2], "the hook's target is the small object")
        XCTAssertTrue(before.remove())
        XCTAssertTrue(instead.remove())
        XCTAssertEqual(try o.send("hooked:", 7) as Int, 42)
        XCTAssertEqual(seen.withLock { $0 }.count, 2)
    }

    func testAMissIsForwardedLikeAnyInstancesMiss() throws {
        let o = try SmallObjectFixture.make(1)
        XCTAssertEqual(try o.send("forwardedPlus:", 5) as Int, 1005, "forwardingTarget answered")
        let error = thrownError { try o.send("noSuchSelector") as Int }
        guard case .doesNotRecognizeSelector(let context)? = error else {
            return XCTFail("expected doesNotRecognizeSelector, got \(String(describing: error))")
        }
        XCTAssertEqual(context.className, SmallObjectFixture.cls.name)
        XCTAssertEqual(context.selector, "noSuchSelector")
    }

    func testAnInvocationRecordKeepsTheSmallObjectAsItsTarget() throws {
        let cls = try makeClass("SmallForwardInvocation")
        let recorded = Mutex<Invocation?>(nil)
        try cls.setMethodSignature { _, sel in sel.name == "later:" ? try Signature("q@:q") : nil }
        try cls.setForwardInvocation { inv in
            inv.retainArguments()
            recorded.withLock { $0 = inv }
        }
        let target = try cls.createInstance()
        _ = try? target.send("later:", 3) as Int
        let inv = try XCTUnwrap(recorded.withLock { $0 })
        let small = try SmallObjectFixture.make(30)
        inv.selector = "plus:"
        try inv.invoke(target: small)
        XCTAssertEqual(try inv.returnValue(as: Int.self), 33, "replayed on the small object")
    }

    func testPlusInitializeRunsOnceOnTheFirstSendToASmallObject() throws {
        let count = Atomic<Int>(0)
        let cls = try makeClass("SmallInitialize")
        try cls.metaclass.addMethod("initialize") { (_: ObjectRef) in _ = count.add(1, ordering: .relaxed) }
        try cls.addMethod("payload") { (me: ObjectRef) -> Int in Int(me.taggedPayload ?? 0) }
        try cls.registerSmallObjectClass(tag: 4)
        XCTAssertEqual(count.load(ordering: .relaxed), 0, "registering a tag is no message")
        let o = try ObjectRef.tagged(tag: 4, payload: 9)
        XCTAssertEqual(try o.send("payload") as Int, 9)
        XCTAssertEqual(try ObjectRef.tagged(tag: 4, payload: 10).send("payload") as Int, 10)
        XCTAssertEqual(count.load(ordering: .relaxed), 1)
    }

    // MARK: refused, with a typed error

    func testRegistrationRefusesWhatCannotBeASmallObjectClass() throws {
        let withIvar = try makeClass("SmallWithIvar", ivars: [("x", .int64)])
        guard case .incompatibleClass(let c)? = thrownError({ try withIvar.registerSmallObjectClass(tag: 3) }) else {
            return XCTFail("an ivar must be refused")
        }
        XCTAssertEqual(c.className, withIvar.name)
        let inherited = try makeClass("SmallInheritsIvar", superclass: withIvar)
        XCTAssertNotNil(thrownError { try inherited.registerSmallObjectClass(tag: 3) }, "an inherited ivar too")

        let other = try makeClass("SmallOther")
        guard case .invalidArgument(let taken)? = thrownError({ try other.registerSmallObjectClass(tag: SmallObjectFixture.tag) }) else {
            return XCTFail("a taken tag must be refused")
        }
        XCTAssertEqual(taken.className, other.name)
        XCTAssertTrue(taken.actual?.contains(SmallObjectFixture.cls.name) ?? false, "names the class holding the tag: \(taken)")
        XCTAssertNotNil(thrownError { try other.registerSmallObjectClass(tag: 8) })
        XCTAssertNotNil(thrownError { try other.registerSmallObjectClass(tag: -1) })
        XCTAssertNotNil(thrownError { try other.metaclass.registerSmallObjectClass(tag: 3) })
        XCTAssertNotNil(thrownError { try SmallObjectFixture.cls.registerSmallObjectClass(tag: 3) }, "one tag per class")
        XCTAssertNoThrow(try SmallObjectFixture.cls.registerSmallObjectClass(tag: SmallObjectFixture.tag), "the same pair again")
        let unregistered = try RuntimeClass.allocate(name: uniqueName("SmallUnregistered"))
        guard case .classNotRegistered? = thrownError({ try unregistered.registerSmallObjectClass(tag: 3) }) else {
            return XCTFail("an unregistered class must be refused")
        }
        XCTAssertNil(RuntimeClass.smallObjectClass(tag: 3), "nothing refused took the tag")
        guard case .classInUse? = thrownError({ try SmallObjectFixture.cls.dispose() }) else {
            return XCTFail("a small-object class is registered for good")
        }
        XCTAssertEqual(try SmallObjectFixture.make(1).send("payload") as Int, 1)
    }

    func testMakingRefusesAFreeTagAndAWidePayload() throws {
        _ = SmallObjectFixture.cls
        XCTAssertNotNil(thrownError { try ObjectRef.tagged(tag: 3, payload: 1) }, "a free tag")
        XCTAssertNotNil(thrownError { try ObjectRef.tagged(tag: 9, payload: 1) })
        guard case .invalidArgument(let c)? = thrownError({ try ObjectRef.tagged(tag: SmallObjectFixture.tag, payload: ObjectRef.maxTaggedPayload + 1) }) else {
            return XCTFail("a payload wider than 60 bits must be refused")
        }
        XCTAssertEqual(c.actual, "\(ObjectRef.maxTaggedPayload + 1)")
    }

    func testWhatNeedsStorageOfItsOwnIsRefused() throws {
        let o = try SmallObjectFixture.make(3)
        let key = AssociationKey("small.refused")
        XCTAssertFalse(o.setAssociatedValue(1, for: key))
        XCTAssertNil(o.associatedValue(for: key))
        XCTAssertNil(o.onDeallocate { _ in })
        guard case .hookFailed(let h)? = thrownError({ try o.hook("plus:", .before) { _ in } }) else {
            return XCTFail("a per-object hook must be refused")
        }
        XCTAssertEqual(h.className, SmallObjectFixture.cls.name)
        XCTAssertEqual(h.selector, "plus:")
        XCTAssertNotNil(thrownError { try o.messages("plus:") })
        guard case .incompatibleClass? = thrownError({ try o.setClass(try makeClass("SmallSwapTarget")) }) else {
            return XCTFail("setClass must be refused")
        }
        XCTAssertEqual(o.runtimeClass, SmallObjectFixture.cls)
        XCTAssertEqual(try o.send("plus:", 1) as Int, 4, "nothing refused changed the object")
    }

    func testWeakReferencesToASmallObjectAreRefused() throws {
        let o = try SmallObjectFixture.make(8)
        guard case .invalidArgument(let c)? = thrownError({ try WeakReference(o) }) else {
            return XCTFail("a weak reference to a small object must be refused")
        }
        XCTAssertEqual(c.className, SmallObjectFixture.cls.name)
        let target = try makeClass("SmallWeakTarget").createInstance()
        let weak = try WeakReference(target)
        XCTAssertNotNil(thrownError { try weak.store(o) })
        XCTAssertEqual(weak.object?.raw, target.raw, "a refused store leaves the reference as it was")

        let owner = try RuntimeClass.allocate(name: uniqueName("SmallWeakIvarOwner"))
        try owner.addWeakIvar("delegate")
        owner.register()
        let instance = try owner.createInstance()
        XCTAssertNotNil(thrownError { try instance.setValue(o, forIvar: "delegate") })

        var slot: sf_id? = target.raw
        sf_initWeak(&slot, o.raw)
        XCTAssertNil(slot, "sf_initWeak leaves the slot NULL")
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        sf_initWeak(&slot, target.raw)
        XCTAssertNil(sf_storeWeak(&slot, o.raw).flatMap { $0 == target.raw ? nil : $0 }, "the slot keeps what it held")
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(slot, target.raw)
        sf_destroyWeak(&slot)
    }

    func testIvarsOfASmallObjectAreRefused() throws {
        let o = try SmallObjectFixture.make(3)
        XCTAssertNotNil(thrownError { try o.value(ofIvar: "x", as: Int.self) })
        XCTAssertNil(sf_object_getIvarPointer(o.raw, Int(sf_object_header_size())))
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
    }
}

/// Many threads sending to small objects while others hook and unhook their class.
final class SmallObjectConcurrencyTests: XCTestCase {
    func testSendsRaceClassHooks() throws {
        let cls = SmallObjectFixture.cls
        let wrong = Atomic<Int>(0)
        runThreads(8) { t in
            if t < 2 {
                for _ in 0..<200 {
                    guard let token = try? cls.hook("hooked:", .before, { _ in }) else { wrong.add(1, ordering: .relaxed); continue }
                    token.remove()
                }
                return
            }
            for i in 0..<5000 {
                let payload = UInt(t * 10_000 + i)
                guard let o = try? SmallObjectFixture.make(payload),
                      let r = try? o.send("hooked:", 2) as Int, r == Int(payload) * 2 else {
                    wrong.add(1, ordering: .relaxed)
                    continue
                }
                sf_retain(o.raw)
                sf_release(o.raw)
            }
        }
        XCTAssertEqual(wrong.load(ordering: .relaxed), 0)
        XCTAssertTrue(cls.hooks(for: "hooked:").isEmpty)
    }
}
