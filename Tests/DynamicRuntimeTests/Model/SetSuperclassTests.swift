import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// class_setSuperclass (after objc4 test/setSuper.m): instance and class methods, ivars and
/// caches follow the new superclass; every unsafe case is refused with a typed error.
final class SetSuperclassTests: XCTestCase {
    private func pair() throws -> (root: RuntimeClass, a: RuntimeClass, b: RuntimeClass) {
        let root = try RuntimeClass(name: uniqueClassName("SSRoot"))
        let a = try RuntimeClass(name: uniqueClassName("SSSuperA"), superclass: root)
        let b = try RuntimeClass(name: uniqueClassName("SSSuperB"), superclass: root)
        try a.addMethod("who") { (_: ObjectRef) -> Int in 1 }
        try b.addMethod("who") { (_: ObjectRef) -> Int in 2 }
        try a.metaclass.addMethod("kind") { (_: ObjectRef) -> Int in 41 }
        try b.metaclass.addMethod("kind") { (_: ObjectRef) -> Int in 42 }
        return (root, a, b)
    }

    func testMethodsAndClassMethodsFollowTheNewSuperclass() throws {
        let (_, a, b) = try pair()
        let sub = try RuntimeClass(name: uniqueClassName("SSSub"), superclass: a)
        do {
            let o = try sub.createInstance()
            XCTAssertEqual(try o.send("who") as Int, 1, "fills the cache through A")
            XCTAssertEqual(try sub.send("kind") as Int, 41)
        }
        XCTAssertEqual(try sub.setSuperclass(b), a)
        XCTAssertEqual(sub.superclass, b)
        XCTAssertEqual(sub.metaclass.superclass, b.metaclass)
        XCTAssertTrue(a.subclasses.allSatisfy { $0 !== sub } && b.subclasses.contains { $0 === sub })
        let o = try sub.createInstance()
        XCTAssertEqual(try o.send("who") as Int, 2, "the flushed cache no longer answers with A's method")
        XCTAssertEqual(try sub.send("kind") as Int, 42, "the metaclass moved too")
        XCTAssertTrue(o.isKind(of: b))
        XCTAssertFalse(o.isKind(of: a))
        XCTAssertEqual(sf_class_getSuperclass(sub.raw), b.raw)
        XCTAssertEqual(sf_class_getSuperclass(sub.metaclass.raw), b.metaclass.raw)
    }

    func testIvarsOfTheNewChainAreUsedAndReleased() throws {
        let root = try RuntimeClass(name: uniqueClassName("SSIvarRoot"))
        let plain = try RuntimeClass(name: uniqueClassName("SSPlain"), superclass: root, ivars: [("n", .int64)])
        let holder = try RuntimeClass(name: uniqueClassName("SSHolder"), superclass: root, ivars: [("held", .object)])
        let sub = try RuntimeClass(name: uniqueClassName("SSIvarSub"), superclass: plain, ivars: [("own", .object)])
        try sub.setSuperclass(holder)
        XCTAssertEqual(sub.objectIvarOffsets.sorted(), [holder.ivar(named: "held")!.offset, sub.ivar(named: "own")!.offset].sorted())
        let released = Locked(false)
        do {
            let value = try root.createInstance()
            value.onDeallocate { _ in released.set(true) }
            let o = try sub.createInstance()
            try o.setValue(value.ref, forIvar: "held")
            XCTAssertNil(sub.ivar(named: "n"), "the old chain's ivar is gone")
        }
        XCTAssertTrue(released.current, "dealloc released the new superclass's strong ivar")
    }

    func testRefusals() throws {
        let (root, a, b) = try pair()
        let sub = try RuntimeClass(name: uniqueClassName("SSRefused"), superclass: a)
        let subsub = try RuntimeClass(name: uniqueClassName("SSRefusedSub"), superclass: sub)
        func refused(_ body: () throws -> Void, _ word: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertThrowsError(try body(), file: file, line: line) { error in
                guard case let .incompatibleClass(context)? = error as? RuntimeError, let reason = context.reason else {
                    return XCTFail("\(error)", file: file, line: line)
                }
                XCTAssertTrue(reason.contains(word), reason, file: file, line: line)
            }
        }
        do {
            let alive = try subsub.createInstance()
            refused({ try sub.setSuperclass(b) }, "alive")
            withExtendedLifetime(alive) {}
        }
        refused({ try sub.setSuperclass(subsub) }, "subclasses")
        refused({ try sub.setSuperclass(sub) }, "subclasses")
        refused({ try root.setSuperclass(a) }, "root class")
        let otherRoot = try RuntimeClass(name: uniqueClassName("SSOtherRoot"))
        refused({ try sub.setSuperclass(otherRoot) }, "root class is")
        let big = try RuntimeClass(name: uniqueClassName("SSBig"), superclass: root, ivars: [("x", .int64), ("y", .int64)])
        let small = try RuntimeClass(name: uniqueClassName("SSSmall"), superclass: root, ivars: [("z", .int32)])
        let tight = try RuntimeClass(name: uniqueClassName("SSTight"), superclass: small, ivars: [("t", .int32)])
        refused({ try tight.setSuperclass(big) }, "bytes")
        let clash = try RuntimeClass(name: uniqueClassName("SSClash"), superclass: root, ivars: [("t", .int32)])
        let other = try RuntimeClass(name: uniqueClassName("SSClashSub"), superclass: big, ivars: [("t", .int64)])
        refused({ try other.setSuperclass(clash) }, "ivar named 't'")
        XCTAssertThrowsError(try sub.metaclass.setSuperclass(b.metaclass)) { error in
            guard case .invalidArgument? = error as? RuntimeError else { return XCTFail("\(error)") }
        }
        let unregistered = try RuntimeClass.allocate(name: uniqueClassName("SSUnregistered"), superclass: root)
        XCTAssertThrowsError(try sub.setSuperclass(unregistered)) { error in
            guard case .classNotRegistered? = error as? RuntimeError else { return XCTFail("\(error)") }
        }
        XCTAssertEqual(sub.superclass, a, "nothing changed")
        XCTAssertEqual(sub.metaclass.superclass, a.metaclass)
        // From C: NULL and a live instance.
        XCTAssertNil(sf_class_setSuperclass(nil, b.raw))
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        let alive = try sub.createInstance()
        XCTAssertNil(sf_class_setSuperclass(sub.raw, b.raw))
        XCTAssertEqual(sf_last_error(), SF_ERR_INCOMPATIBLE_CLASS)
        withExtendedLifetime(alive) {}
    }

    func testAnObjectWithItsOwnHooksBlocksItUntilItDies() throws {
        let (_, a, b) = try pair()
        let sub = try RuntimeClass(name: uniqueClassName("SSHooked"), superclass: a)
        do {
            let o = try sub.createInstance()
            let seen = Locked(0)
            let token = try o.hook("who", .before) { _ in seen.withLock { $0 += 1 } }
            XCTAssertEqual(try o.send("who") as Int, 1)
            XCTAssertEqual(seen.current, 1)
            XCTAssertThrowsError(try sub.setSuperclass(b))
            withExtendedLifetime(token) {}
        }
        XCTAssertEqual(try sub.setSuperclass(b), a, "the hook class left behind does not block it")
        XCTAssertEqual(try sub.createInstance().send("who") as Int, 2)
    }

    func testFromCAfterTheLastInstanceDied() throws {
        let (_, a, b) = try pair()
        let sub = try RuntimeClass(name: uniqueClassName("SSFromC"), superclass: a)
        do { _ = try sub.createInstance() }
        XCTAssertEqual(sf_class_setSuperclass(sub.raw, b.raw), a.raw)
        XCTAssertEqual(sf_last_error(), SF_OK)
        XCTAssertEqual(try sub.createInstance().send("who") as Int, 2)
    }
}
