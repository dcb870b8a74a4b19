import CDynamicRuntime
import Glibc
import Synchronization
import XCTest
@testable import DynamicRuntime

/// An overridable `-dealloc` with `[super dealloc]`, re-expressed from objc4's test/customrr.m
/// and test/rr-dealloc (dealloc chains), test/associationForbidden / test/weakIvar teardown
/// order (objc_destructInstance: ivars, associations, weak references, free) and RxCocoa's
/// `deallocating` (observers fire before `dealloc` runs); Aspects' dealloc hooks.
final class DeallocOverrideTests: XCTestCase {
    private let key = AssociationKey("DeallocOverride")

    /// A class whose `dealloc` logs and calls super, with a strong ivar `held`.
    private func makeClass(_ base: String, superclass: RuntimeClass? = nil, log: Locked<[String]>,
                           callsSuper: Bool = true) throws -> RuntimeClass {
        let cls = try RuntimeClass(name: uniqueName(base), superclass: superclass,
                                   ivars: superclass == nil ? [("held", .object)] : [])
        let tag = cls.name
        try cls.addMethod("dealloc") { (me: ObjectRef) in
            log.withLock { $0.append("dealloc \(tag)") }
            if callsSuper { try me.asSuper(of: cls).send("dealloc", as: Void.self) }
        }
        return cls
    }

    /// An object whose deallocation appends `name` to the log.
    private func witness(_ name: String, _ log: Locked<[String]>) throws -> Object {
        let w = try RuntimeClass(name: uniqueName("Witness")).createInstance()
        _ = w.onDeallocate { _ in log.withLock { $0.append(name) } }
        return w
    }

    /// Stores a witness in `o`'s strong ivar `held`; `o`'s is then its only reference.
    private func hold(_ o: Object, _ name: String, _ log: Locked<[String]>) throws {
        let w = try witness(name, log)
        try o.setValue(w.ref, forIvar: "held")
        withExtendedLifetime(w) {}
    }

    private func associate(_ o: Object, _ name: String, _ log: Locked<[String]>) throws {
        let w = try witness(name, log)
        try o.setAssociatedObject(w.ref, for: key, policy: .retain)
        withExtendedLifetime(w) {}
    }

    func testTheChainRunsSubclassFirstAndTheRootTearsDownInObjc4Order() throws {
        let log = Locked<[String]>([])
        let before = Runtime.liveObjectCount
        let base = try makeClass("DeallocBase", log: log)
        let sub = try makeClass("DeallocSub", superclass: base, log: log)
        do {
            let o = try sub.createInstance()
            try hold(o, "ivar released", log)
            try associate(o, "association released", log)
            _ = o.onDeallocate { _ in log.withLock { $0.append("observer") } }
            let weak = try WeakReference(o)
            try sub.addMethod("checkWeak") { (_: ObjectRef) in
                log.withLock { $0.append("weak reads \(weak.object == nil ? "nil" : "the object")") }
            }
            try base.replaceMethod("dealloc") { (me: ObjectRef) in
                try me.send("checkWeak", as: Void.self)
                log.withLock { $0.append("dealloc \(base.name)") }
                try me.asSuper(of: base).send("dealloc", as: Void.self)
            }
            _ = o
        }
        XCTAssertEqual(log.withLock { $0 }, ["observer", "dealloc \(sub.name)", "weak reads nil", "dealloc \(base.name)",
                                            "ivar released", "association released"])
        XCTAssertEqual(Runtime.liveObjectCount, before)
    }

    func testAnOverrideReleasesWhatItOwns() throws {
        let log = Locked<[String]>([])
        let cls = try RuntimeClass(name: uniqueName("DeallocOwner"), ivars: [("owned", .pointer(nil))])
        let offset = try XCTUnwrap(cls.ivar(named: "owned")).offset
        try cls.addMethod("dealloc") { (me: ObjectRef) in
            let slot = UnsafeMutableRawPointer(me.raw!) + offset
            if let owned = slot.load(as: sf_id?.self) { sf_release(owned) }
            log.withLock { $0.append("released") }
            try me.asSuper(of: cls).send("dealloc", as: Void.self)
        }
        let before = Runtime.liveObjectCount
        do {
            let o = try cls.createInstance()
            try { () throws in
                let owned = try witness("owned gone", log)
                (UnsafeMutableRawPointer(o.raw) + offset).storeBytes(of: sf_retain(owned.raw), as: sf_id?.self)
            }()
        }
        XCTAssertEqual(log.withLock { $0 }, ["owned gone", "released"])
        XCTAssertEqual(Runtime.liveObjectCount, before)
    }

    func testARootClassOverrideReachesTheRuntimesRootDealloc() throws {
        let log = Locked<[String]>([])
        let cls = try makeClass("DeallocRoot", log: log)
        let before = Runtime.liveObjectCount
        do {
            let o = try cls.createInstance()
            try hold(o, "ivar released", log)
        }
        XCTAssertEqual(log.withLock { $0 }, ["dealloc \(cls.name)", "ivar released"])
        XCTAssertEqual(Runtime.liveObjectCount, before)
    }

    func testADeallocThatSkipsSuperOrThrowsIsFinishedByTheRuntimeOnce() throws {
        struct Boom: Error {}
        let log = Locked<[String]>([])
        let skips = try makeClass("DeallocSkipsSuper", log: log, callsSuper: false)
        let throwing = try RuntimeClass(name: uniqueName("DeallocThrows"), ivars: [("held", .object)])
        try throwing.addMethod("dealloc") { (_: ObjectRef) in throw Boom() }
        let before = Runtime.liveObjectCount
        let reported = RootDealloc.reported.load(ordering: .relaxed)
        for cls in [skips, throwing] {
            let o = try cls.createInstance()
            try hold(o, "ivar of \(cls.name)", log)
        }
        XCTAssertEqual(log.withLock { $0 }, ["dealloc \(skips.name)", "ivar of \(skips.name)", "ivar of \(throwing.name)"])
        XCTAssertEqual(Runtime.liveObjectCount, before, "freed, not leaked")
        XCTAssertEqual(RootDealloc.reported.load(ordering: .relaxed) - reported, 3, "skipped super; threw and skipped it")
    }

    func testASecondSuperDeallocIsRefusedAndNothingIsFreedTwice() throws {
        let errors = Locked<[RuntimeError]>([])
        let cls = try RuntimeClass(name: uniqueName("DeallocTwice"), ivars: [("held", .object)])
        try cls.addMethod("dealloc") { (me: ObjectRef) in
            try me.asSuper(of: cls).send("dealloc", as: Void.self)
            do { try me.asSuper(of: cls).send("dealloc", as: Void.self) } catch let e as RuntimeError { errors.withLock { $0.append(e) } }
        }
        let before = Runtime.liveObjectCount
        let log = Locked<[String]>([])
        do {
            let o = try cls.createInstance()
            try hold(o, "ivar", log)
        }
        XCTAssertEqual(log.withLock { $0 }, ["ivar"])
        guard case let .invalidArgument(c)? = errors.withLock({ $0.first }) else { return XCTFail("refused") }
        XCTAssertEqual(c.className, cls.name)
        XCTAssertEqual(c.selector, "dealloc")
        XCTAssertEqual(Runtime.liveObjectCount, before)
    }

    func testAResurrectingDeallocDoesNotKeepTheObjectNorFreeItTwice() throws {
        let cls = try RuntimeClass(name: uniqueName("DeallocResurrects"))
        let counts = Locked<[UInt]>([])
        try cls.addMethod("dealloc") { (me: ObjectRef) in
            // Retains and releases are inert once the last release began (objc4 ignores them too).
            _ = sf_retain(me.raw)
            _ = sf_retain(me.raw)
            sf_release(me.raw)
            counts.withLock { $0.append(UInt(sf_object_retainCount(me.raw))) }
            try me.asSuper(of: cls).send("dealloc", as: Void.self)
        }
        let before = Runtime.liveObjectCount
        do { _ = try cls.createInstance() }
        XCTAssertEqual(counts.withLock { $0 }.count, 1)
        XCTAssertEqual(Runtime.liveObjectCount, before)
    }

    func testWrongShapesAreRefusedNamingClassAndSelector() throws {
        let cls = try RuntimeClass(name: uniqueName("DeallocShape"))
        assertThrows(.signatureMismatch(.init(className: cls.name, selector: "dealloc", expected: "v@:", actual: "v@:q"))) {
            try cls.addMethod("dealloc") { (_: ObjectRef, _: Int) in }
        }
        assertThrows(.signatureMismatch(.init(className: cls.name, selector: "dealloc", expected: "v@:", actual: "q@:"))) {
            try cls.addMethod("dealloc", implementation: IMP(unsafeBitCast(RootDealloc.function, to: sf_imp.self)), types: "q@:")
        }
        guard case let .reservedSelector(c)? = thrownError({ try cls.metaclass.addMethod("dealloc") { (_: ObjectRef) in } }) else {
            return XCTFail("a class method dealloc is refused")
        }
        XCTAssertEqual(c.className, cls.name)
        XCTAssertEqual(c.selector, "dealloc")
    }

    func testHooksBeforeInsteadAndAfterDealloc() throws {
        let log = Locked<[String]>([])
        let cls = try makeClass("DeallocHooked", log: log)
        let before = try cls.hook("dealloc", .before) { _ in log.withLock { $0.append("before") } }
        let after = try cls.hook("dealloc", .after) { _ in log.withLock { $0.append("after") } }
        let instead = try cls.hook("dealloc", .instead) { ctx in
            log.withLock { $0.append("instead") }
            try ctx.invokeOriginal()
        }
        let objects = Runtime.liveObjectCount
        do {
            let o = try cls.createInstance()
            try hold(o, "ivar", log)
        }
        XCTAssertEqual(log.withLock { $0 }, ["before", "instead", "dealloc \(cls.name)", "ivar", "after"])
        XCTAssertEqual(Runtime.liveObjectCount, objects)
        for t in [before, after, instead] { XCTAssertTrue(t.remove()) }
        log.withLock { $0 = [] }
        do { _ = try cls.createInstance() }
        XCTAssertEqual(log.withLock { $0 }, ["dealloc \(cls.name)"])
    }

    func testAHookOnAClassWithoutAnOverride() throws {
        let log = Locked<[String]>([])
        let plain = try RuntimeClass(name: uniqueName("DeallocPlainHooked"), ivars: [("held", .object)])
        let token = try plain.hook("dealloc", .before) { ctx in
            log.withLock { $0.append("class hook on \(ctx.target.isNil ? "nil" : "the object")") }
        }
        let objects = Runtime.liveObjectCount
        let reported = RootDealloc.reported.load(ordering: .relaxed)
        do {
            let o = try plain.createInstance()
            try hold(o, "ivar", log)
        }
        XCTAssertEqual(log.withLock { $0 }, ["class hook on the object", "ivar"])
        XCTAssertEqual(Runtime.liveObjectCount, objects)
        XCTAssertEqual(RootDealloc.reported.load(ordering: .relaxed), reported)
        XCTAssertTrue(token.remove())
    }

    func testAnObjectsOwnHookOnDealloc() throws {
        let log = Locked<[String]>([])
        let plain = try RuntimeClass(name: uniqueName("DeallocObjectHooked"), ivars: [("held", .object)])
        let objects = Runtime.liveObjectCount
        let reported = RootDealloc.reported.load(ordering: .relaxed)
        do {
            let o = try plain.createInstance()
            try hold(o, "ivar", log)
            _ = try o.hook("dealloc", .before) { _ in log.withLock { $0.append("object hook") } }
        }
        XCTAssertEqual(log.withLock { $0 }, ["object hook", "ivar"])
        XCTAssertEqual(Runtime.liveObjectCount, objects)
        XCTAssertEqual(RootDealloc.reported.load(ordering: .relaxed), reported)
    }
}
