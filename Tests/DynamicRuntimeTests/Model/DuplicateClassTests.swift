import TestSupport
import XCTest
@testable import DynamicRuntime

/// `objc_duplicateClass` (objc4 test/duplicateClass.m, re-expressed): the copy has the
/// original's superclass, layout, methods, class methods, protocols and properties; instances
/// switch between the two with `setClass`; later changes to one leave the other alone.
final class DuplicateClassTests: XCTestCase {
    private func makeOriginal() throws -> RuntimeClass {
        let base = try RuntimeClass(name: uniqueClassName("DupBase"))
        try base.addMethod("inherited") { (_: ObjectRef) -> Int in 7 }
        let cls = try RuntimeClass.allocate(name: uniqueClassName("DupOriginal"), superclass: base)
        try cls.addIvar("count", type: .int64)
        try cls.addIvar("friend", type: .object)
        cls.register()
        try cls.addMethod("answer") { (_: ObjectRef) -> Int in 42 }
        try cls.metaclass.addMethod("classAnswer") { (_: ObjectRef) -> Int in 43 }
        let proto = try RuntimeProtocol.allocate(name: uniqueClassName("DupProto"))
        try proto.register()
        try cls.addProtocol(proto)
        try cls.addProperty("count", attributes: "Tq,N,Vcount")
        return cls
    }

    func testTheCopyHasTheOriginalsShape() throws {
        let cls = try makeOriginal()
        let dup = try cls.duplicate(named: uniqueClassName("DupCopy"))
        XCTAssertNotEqual(dup, cls)
        XCTAssertNotEqual(dup.metaclass, cls.metaclass)
        XCTAssertEqual(dup.superclass, cls.superclass)
        XCTAssertEqual(dup.instanceSize, cls.instanceSize)
        XCTAssertEqual(RuntimeClass.named(dup.name), dup, "registered under its name")
        XCTAssertEqual(Set(dup.methodList.map(\.selector.name)), Set(cls.methodList.map(\.selector.name)))
        XCTAssertEqual(dup.ownMethod(for: "answer")?.implementation, cls.ownMethod(for: "answer")?.implementation,
                       "the copy shares the original's IMPs")
        XCTAssertEqual(dup.protocols, cls.protocols)
        XCTAssertEqual(dup.property(named: "count")?.attributeString, "Tq,N,Vcount")
        XCTAssertNotEqual(dup.property(named: "count"), cls.property(named: "count"))
        XCTAssertEqual(dup.ivar(named: "friend")?.offset, cls.ivar(named: "friend")?.offset)

        let o = try dup.createInstance()
        XCTAssertEqual(try o.send("answer") as Int, 42)
        XCTAssertEqual(try o.send("inherited") as Int, 7)
        XCTAssertEqual(try dup.send("classAnswer") as Int, 43)
    }

    func testAnObjectSwitchesBetweenOriginalAndCopyLikeKVO() throws {
        let cls = try makeOriginal()
        let dup = try cls.duplicate(named: uniqueClassName("DupKVO"))
        // The copy overrides what KVO's subclass-like copy would: a setter that also notes the change.
        try dup.replaceMethod("answer") { (_: ObjectRef) -> Int in 99 }
        let friend = try cls.createInstance()
        let o = try cls.createInstance()
        try o.setValue(Int64(5), forIvar: "count")
        try o.setValue(friend, forIvar: "friend")
        XCTAssertEqual(try o.setClass(dup), cls)
        XCTAssertEqual(o.runtimeClass, dup)
        XCTAssertEqual(try o.send("answer") as Int, 99)
        XCTAssertEqual(try o.value(ofIvar: "count") as Int64, 5, "ivars stay where they were")
        XCTAssertEqual(try o.setClass(cls), dup)
        XCTAssertEqual(try o.send("answer") as Int, 42, "the original was left alone")
    }

    func testLaterChangesStayWithTheirClass() throws {
        let cls = try makeOriginal()
        let hooked = Locked<Int>(0)
        let token = try cls.hook("answer", .before) { _ in hooked.withLock { $0 += 1 } }
        let dup = try cls.duplicate(named: uniqueClassName("DupLater"))
        let fromCopy = try dup.createInstance()
        XCTAssertEqual(try fromCopy.send("answer") as Int, 42)
        XCTAssertEqual(hooked.withLock { $0 }, 0, "the copy took the hooked method's original, not the hook")
        _ = try cls.createInstance().send("answer") as Int
        XCTAssertEqual(hooked.withLock { $0 }, 1)
        try token.remove()

        try cls.addMethod("onlyOriginal") { (_: ObjectRef) -> Int in 1 }
        XCTAssertThrowsError(try fromCopy.send("onlyOriginal") as Int)
        try dup.addMethod("onlyCopy") { (_: ObjectRef) -> Int in 2 }
        XCTAssertFalse(cls.responds(to: "onlyCopy"))
        try cls.replaceMethod("answer") { (_: ObjectRef) -> Int in 0 }
        XCTAssertEqual(try fromCopy.send("answer") as Int, 42)
    }

    func testBadInputIsRefused() throws {
        let cls = try makeOriginal()
        XCTAssertThrowsError(try cls.duplicate(named: cls.name)) { error in
            guard case let .duplicateClass(c)? = error as? RuntimeError else { return XCTFail("\(error)") }
            XCTAssertEqual(c.className, cls.name)
        }
        XCTAssertThrowsError(try cls.metaclass.duplicate(named: uniqueClassName("DupMeta"))) { error in
            guard case let .invalidArgument(c)? = error as? RuntimeError else { return XCTFail("\(error)") }
            XCTAssertEqual(c.className, cls.name)
            XCTAssertEqual(c.actual, "a metaclass")
        }
        let pending = try RuntimeClass.allocate(name: uniqueClassName("DupPending"))
        XCTAssertThrowsError(try pending.duplicate(named: uniqueClassName("DupOfPending"))) { error in
            guard case .classNotRegistered? = error as? RuntimeError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try cls.duplicate(named: ""))
        // A copy is disposed like any class, and its name is free again.
        let name = uniqueClassName("DupDisposed")
        try cls.duplicate(named: name).dispose()
        XCTAssertNil(RuntimeClass.named(name))
        XCTAssertNoThrow(try cls.duplicate(named: name).dispose())
    }
}
