import CDynamicRuntime
import Glibc
import Synchronization
import XCTest
@testable import DynamicRuntime

/// `+initialize`, re-expressed from objc4's test/initialize.m and GNUstep's +initialize tests:
/// once per class, superclass first, before the first message or instance; inherited with the
/// subclass as receiver; re-entrant on the initializing thread; a throwing one.
final class InitializeTests: XCTestCase {
    /// A class with a `+initialize` that logs its receiver's name, and a class method `ping`.
    private func makeClass(_ base: String, superclass: RuntimeClass? = nil, log: Locked<[String]>,
                           initialize: Bool = true) throws -> RuntimeClass {
        let cls = try RuntimeClass(name: uniqueName(base), superclass: superclass)
        if initialize {
            try cls.metaclass.addMethod("initialize") { (me: ObjectRef) in
                log.withLock { $0.append(String(cString: sf_class_getName(sf_object_as_class(me.raw!)))) }
            }
        }
        try cls.metaclass.addMethod("ping") { (_: ObjectRef) in 1 }
        try cls.addMethod("value") { (_: ObjectRef) in 7 }
        return cls
    }

    func testSentOnceBeforeTheFirstMessageSuperclassFirst() throws {
        let log = Locked<[String]>([])
        let base = try makeClass("InitBase", log: log)
        let sub = try makeClass("InitSub", superclass: base, log: log)
        XCTAssertEqual(log.withLock { $0 }, [], "nothing sends +initialize before a message")
        XCTAssertEqual(try ObjectRef(sf_class_as_object(sub.raw)).send("ping") as Int, 1)
        XCTAssertEqual(log.withLock { $0 }, [base.name, sub.name])
        XCTAssertEqual(try ObjectRef(sf_class_as_object(sub.raw)).send("ping") as Int, 1)
        XCTAssertEqual(try ObjectRef(sf_class_as_object(base.raw)).send("ping") as Int, 1)
        XCTAssertEqual(log.withLock { $0 }, [base.name, sub.name], "once per class")
    }

    func testASubclassWithoutItsOwnRunsTheSuperclassesWithItselfAsReceiver() throws {
        let log = Locked<[String]>([])
        let base = try makeClass("InitInheritBase", log: log)
        let sub = try makeClass("InitInheritSub", superclass: base, log: log, initialize: false)
        _ = try ObjectRef(sf_class_as_object(sub.raw)).send("ping") as Int
        XCTAssertEqual(log.withLock { $0 }, [base.name, sub.name])
    }

    func testCreatingAnInstanceSendsItAndInstanceSendsFindItDone() throws {
        let log = Locked<[String]>([])
        let cls = try makeClass("InitAlloc", log: log)
        let o = try cls.createInstance()
        XCTAssertEqual(log.withLock { $0 }, [cls.name])
        XCTAssertEqual(try o.send("value") as Int, 7)
        XCTAssertEqual(log.withLock { $0 }, [cls.name])
    }

    func testAnInitializeThatSendsToItsOwnClassRunsOnceAndNothingIsCachedMeanwhile() throws {
        let cls = try RuntimeClass(name: uniqueName("InitReentrant"))
        let seen = Locked<[Int]>([])
        let runs = Atomic<Int>(0)
        try cls.metaclass.addMethod("answer") { (_: ObjectRef) in 42 }
        try cls.metaclass.addMethod("initialize") { (me: ObjectRef) in
            runs.add(1, ordering: .relaxed)
            // Re-entrant on this thread: the send is served, uncached, without waiting.
            let a: Int = try me.send("answer")
            let b: Int = try me.send("answer")
            seen.withLock { $0 += [a, b, Int(sf_class_cache_occupied(cls.metaclass.raw))] }
        }
        XCTAssertEqual(try ObjectRef(sf_class_as_object(cls.raw)).send("answer") as Int, 42)
        XCTAssertEqual(seen.withLock { $0 }, [42, 42, 0])
        XCTAssertEqual(runs.load(ordering: .relaxed), 1)
        XCTAssertGreaterThan(sf_class_cache_occupied(cls.metaclass.raw), 0, "cached once +initialize returned")
    }

    func testLookingUpAnImplementationInitializesAsObjc4Does() throws {
        let log = Locked<[String]>([])
        let cls = try makeClass("InitLookup", log: log)
        _ = cls.methodImplementation(for: "value")
        XCTAssertEqual(log.withLock { $0 }, [cls.name])
    }

    func testAThrowingInitializeFailsTheFirstSendAndMarksTheClassInitialized() throws {
        struct Boom: Error {}
        let cls = try RuntimeClass(name: uniqueName("InitThrows"))
        let runs = Atomic<Int>(0)
        try cls.metaclass.addMethod("initialize") { (_: ObjectRef) in
            runs.add(1, ordering: .relaxed)
            throw Boom()
        }
        try cls.metaclass.addMethod("ping") { (_: ObjectRef) in 1 }
        let classObject = ObjectRef(sf_class_as_object(cls.raw))
        guard case let .implementationFailed(c)? = thrownError({ try classObject.send("ping") as Int }) else {
            return XCTFail("the first send gets +initialize's error")
        }
        XCTAssertEqual(c.selector, "initialize")
        XCTAssertEqual(try classObject.send("ping") as Int, 1, "later sends proceed (objc4: initialized anyway)")
        _ = try cls.createInstance()
        XCTAssertEqual(runs.load(ordering: .relaxed), 1)
    }

    func testAClassWithNoInitializeIsMarkedInitializedWithoutASend() throws {
        let cls = try RuntimeClass(name: uniqueName("InitNone"))
        try cls.addMethod("value") { (_: ObjectRef) in 3 }
        XCTAssertFalse(cls.isInitialized)
        XCTAssertEqual(try cls.createInstance().send("value") as Int, 3)
        XCTAssertTrue(cls.isInitialized)
        XCTAssertThrowsError(try ObjectRef(sf_class_as_object(cls.raw)).send("initialize", as: Void.self),
                             "sending it yourself is an ordinary, unrecognized message")
    }

    func testAnObjectWithItsOwnHookAndAClassMethodFirstBothInitialize() throws {
        let log = Locked<[String]>([])
        let cls = try makeClass("InitHidden", log: log)
        let o = try cls.createInstance()
        let token = try o.hook("value", .before) { _ in }
        XCTAssertEqual(try o.send("value") as Int, 7)
        XCTAssertTrue(token.remove())
        XCTAssertEqual(log.withLock { $0 }, [cls.name], "the hidden class is the visible class's")
    }
}
