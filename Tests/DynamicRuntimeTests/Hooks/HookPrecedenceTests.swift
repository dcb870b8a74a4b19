import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// Which hook wins between an object and its class, position by position. The scenarios follow
/// Aspects' `testInsteadHook` (a class-wide instead hook does not override an object's own) and
/// Stinger's `testInstanceMethodC` (the object's instead hook wins; removing it falls back to
/// the class's, removing that to the original), with the hooks added in either order.
final class HookPrecedenceTests: XCTestCase {
    private func makeLabelled(_ name: String) throws -> RuntimeClass {
        let cls = try RuntimeClass(name: uniqueClassName(name))
        try cls.addMethod("label") { (_: ObjectRef) -> Int in 1 }
        return cls
    }

    private func returning(_ value: Int) -> @Sendable (HookContext) throws -> Void {
        { ctx in try ctx.setReturnValue(value) }
    }

    func testAnObjectsInsteadHookWinsOverItsClasss() throws {
        for objectFirst in [true, false] {
            let cls = try makeLabelled("PrecedenceAspects")
            let o1 = try cls.createInstance(), o2 = try cls.createInstance()
            var own: HookToken?
            if objectFirst { own = try o2.hook("label", .instead, returning(102)) }
            let classHook = try cls.hook("label", .instead, returning(900))
            if !objectFirst { own = try o2.hook("label", .instead, returning(102)) }
            XCTAssertEqual(try o1.send("label") as Int, 900, "objectFirst: \(objectFirst)")
            XCTAssertEqual(try o2.send("label") as Int, 102, "objectFirst: \(objectFirst): the object's own hook wins")
            own?.remove()
            classHook.remove()
        }
    }

    func testRemovingTheHooksFallsBackInEitherOrder() throws {
        for removeObjectsFirst in [true, false] {
            let cls = try makeLabelled("PrecedenceStinger")
            let o = try cls.createInstance()
            let classHook = try cls.hook("label", .instead, returning(900))
            let own = try o.hook("label", .instead, returning(102))
            XCTAssertEqual(try o.send("label") as Int, 102)
            if removeObjectsFirst {
                XCTAssertTrue(own.remove())
                XCTAssertEqual(try o.send("label") as Int, 900, "the class's hook again")
                XCTAssertTrue(classHook.remove())
            } else {
                XCTAssertTrue(classHook.remove())
                XCTAssertEqual(try o.send("label") as Int, 102, "the object's hook still")
                XCTAssertTrue(own.remove())
            }
            XCTAssertEqual(try o.send("label") as Int, 1, "the original")
        }
    }

    /// The object's instead hooks proceed into the class's, which proceed into the original;
    /// before and after hooks keep the class's first.
    func testEachPositionMerges() throws {
        let cls = try makeLabelled("PrecedenceMerge")
        let o = try cls.createInstance()
        let log = Locked<[String]>([])
        func note(_ s: String) -> @Sendable (HookContext) throws -> Void { { _ in log.withLock { $0.append(s) } } }
        let tokens = [
            try o.hook("label", .instead) { ctx in
                log.withLock { $0.append("object-instead") }
                try ctx.proceed()
                try ctx.setReturnValue(try ctx.returnValue(as: Int.self) * 10)
            },
            try cls.hook("label", .instead) { ctx in
                log.withLock { $0.append("class-instead") }
                try ctx.proceed()
                try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 5)
            },
            try o.hook("label", .before, note("object-before")),
            try cls.hook("label", .before, note("class-before")),
            try o.hook("label", .after, note("object-after")),
            try cls.hook("label", .after, note("class-after")),
        ]
        XCTAssertEqual(try o.send("label") as Int, 60, "(1 + 5) * 10: the class's hook inside the object's")
        XCTAssertEqual(log.withLock { $0 }, ["class-before", "object-before", "object-instead", "class-instead",
                                             "class-after", "object-after"])
        for t in tokens { XCTAssertTrue(t.remove()) }
        XCTAssertEqual(try o.send("label") as Int, 1)
    }

    /// An object's instead hook that does not proceed drops the class's instead hooks and the
    /// original, not the class's before and after hooks.
    func testAnObjectsInsteadHookThatDoesNotProceed() throws {
        let cls = try makeLabelled("PrecedenceDrop")
        let o = try cls.createInstance()
        let log = Locked<[String]>([])
        let tokens = [
            try cls.hook("label", .before) { _ in log.withLock { $0.append("class-before") } },
            try cls.hook("label", .instead) { ctx in log.withLock { $0.append("class-instead") }; try ctx.proceed() },
            try cls.hook("label", .after) { _ in log.withLock { $0.append("class-after") } },
            try o.hook("label", .instead, returning(7)),
        ]
        XCTAssertEqual(try o.send("label") as Int, 7)
        XCTAssertEqual(log.withLock { $0 }, ["class-before", "class-after"])
        for t in tokens { t.remove() }
    }

    /// The same precedence through the C API's hooks.
    func testTheCHooks() throws {
        let cls = try makeLabelled("PrecedenceC")
        let o1 = try cls.createInstance(), o2 = try cls.createInstance()
        let sel = Selector("label").raw
        let answer: sf_hook_fn = { call, context in
            var v = Int(bitPattern: context)
            return sf_call_setReturnValue(call, &v, MemoryLayout<Int>.size)
        }
        let own = sf_object_hookMethod(o2.raw, sel, SF_HOOK_INSTEAD, nil, answer, UnsafeMutableRawPointer(bitPattern: 102))
        let classHook = sf_class_hookMethod(cls.raw, sel, SF_HOOK_INSTEAD, nil, answer, UnsafeMutableRawPointer(bitPattern: 900))
        XCTAssertNotEqual(own, 0)
        XCTAssertNotEqual(classHook, 0)
        XCTAssertEqual(try o1.send("label") as Int, 900)
        XCTAssertEqual(try o2.send("label") as Int, 102)
        XCTAssertEqual(sf_hook_remove(own), SF_OK)
        XCTAssertEqual(try o2.send("label") as Int, 900)
        XCTAssertEqual(sf_hook_remove(classHook), SF_OK)
        XCTAssertEqual(try o2.send("label") as Int, 1)
    }
}
