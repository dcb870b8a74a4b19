import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// Hooks living with other code that swaps an object's class, KVO-style (a subclass whose
/// override calls super, or a `duplicate(named:)` copy, installed with `setClass`): every hook
/// keeps running, and removing the hooks and restoring the class in either order leaves each
/// party's state exact.
final class ClassSwapCoexistenceTests: XCTestCase {
    /// `value:` answers x + 1 on the base; the KVO subclass answers [super value:x*10] + 1000.
    private func makePair(_ prefix: String) throws -> (base: RuntimeClass, kvo: RuntimeClass) {
        let (base, sub) = try makeSuperCallingPair(prefix)
        return (base, sub)
    }

    /// The object's own hooks on `value:`: a before, an instead and an after hook that add
    /// 10000 to the answer. Returns the tokens.
    private func hookObject(_ o: ObjectRef, _ log: Locked<[String]>) throws -> [HookToken] {
        [
            try o.hook("value:", .before) { _ in log.withLock { $0.append("before") } },
            try o.hook("value:", .instead) { ctx in log.withLock { $0.append("instead") }; try ctx.proceed() },
            try o.hook("value:", .after) { ctx in
                log.withLock { $0.append("after") }
                try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + 10000)
            },
        ]
    }

    private func isHidden(_ o: ObjectRef) -> Bool {
        sf_class_info(sf_object_isa(o.raw)!) & UInt32(SF_CLASS_HIDDEN) != 0
    }

    /// Hooked entries the class's hidden subclass still holds (none once no object needs them).
    private func hiddenEntries(_ cls: RuntimeClass) -> Int {
        Runtime.state.lock.withLock { cls.objectHookClass?.methods.count ?? 0 }
    }

    /// What `value:1` answered and which hooks ran.
    private struct Outcome: Equatable {
        let value: Int
        let ran: [String]
        init(_ value: Int, _ ran: [String]) { self.value = value; self.ran = ran }
    }

    private func send(_ o: ObjectRef, _ log: Locked<[String]>) throws -> Outcome {
        log.withLock { $0 = [] }
        let r: Int = try o.send("value:", 1)
        return Outcome(r, log.withLock { $0 })
    }

    // MARK: a. hooked first, then swapped

    func testHookedObjectSwappedToKVOSubclassThenHooksRemovedFirst() throws {
        let (base, kvo) = try makePair("SwapHooksFirst")
        let o = try base.createInstance()
        let log = Locked<[String]>([])
        let tokens = try hookObject(o.ref, log)
        XCTAssertEqual(try send(o.ref, log).value, 10002)

        XCTAssertEqual(try o.setClass(kvo), base, "setClass answers the visible class it replaced")
        XCTAssertEqual(o.runtimeClass, kvo)
        XCTAssertEqual(sf_object_getClass(o.raw), kvo.raw)
        XCTAssertTrue(isHidden(o.ref), "the hooks moved to the new class's hidden subclass")
        let outcome = try send(o.ref, log)
        let (r, ran) = (outcome.value, outcome.ran)
        XCTAssertEqual(r, 11011, "the KVO override ran (11 + 1000) and the after hook added 10000")
        XCTAssertEqual(ran, ["before", "instead", "after"])
        XCTAssertEqual(hiddenEntries(base), 0, "the old hidden entries went")
        XCTAssertEqual(o.ref.hooks(for: "value:").count, 3)

        for t in tokens { XCTAssertTrue(t.remove()) }
        XCTAssertEqual(sf_object_isa(o.raw), kvo.raw, "the other code's class stays installed, exactly")
        XCTAssertEqual(try send(o.ref, log).value, 1011)
        XCTAssertEqual(hiddenEntries(kvo), 0)

        XCTAssertEqual(try o.setClass(base), kvo)
        XCTAssertEqual(sf_object_isa(o.raw), base.raw)
        XCTAssertEqual(try send(o.ref, log), Outcome(2, []))
        XCTAssertNoThrow(try kvo.dispose(), "no instance or hidden class left behind on the KVO class")
    }

    func testHookedObjectSwappedToKVOSubclassThenClassRestoredFirst() throws {
        let (base, kvo) = try makePair("SwapRestoreFirst")
        let o = try base.createInstance()
        let log = Locked<[String]>([])
        let tokens = try hookObject(o.ref, log)
        try o.setClass(kvo)
        XCTAssertThrowsError(try kvo.dispose(), "the swapped object counts as the KVO class's")

        XCTAssertEqual(try o.setClass(base), kvo)
        XCTAssertEqual(o.runtimeClass, base)
        XCTAssertTrue(isHidden(o.ref))
        XCTAssertEqual(try send(o.ref, log), Outcome(10002, ["before", "instead", "after"]), "hooks run, the KVO override no more")
        XCTAssertEqual(hiddenEntries(kvo), 0)
        XCTAssertNoThrow(try kvo.dispose(), "nothing of the hooks keeps the KVO class")

        for t in tokens { XCTAssertTrue(t.remove()) }
        XCTAssertEqual(sf_object_isa(o.raw), base.raw, "the original class, exactly")
        XCTAssertEqual(hiddenEntries(base), 0)
        XCTAssertEqual(try send(o.ref, log), Outcome(2, []))
        XCTAssertEqual(o.ref.hooks().count, 0)
    }

    func testHookedObjectSwappedToADuplicateAndBack() throws {
        let base = try makeClass("SwapDuplicate")
        try base.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        let copy = try base.duplicate(named: uniqueClassName("SwapDuplicateKVO"))
        try copy.replaceMethod("value:") { (_: ObjectRef, x: Int) in x + 500 }
        let o = try base.createInstance()
        let log = Locked<[String]>([])
        let tokens = try hookObject(o.ref, log)

        XCTAssertEqual(try o.setClass(copy), base)
        XCTAssertEqual(sf_object_getClass(o.raw), copy.raw)
        XCTAssertEqual(try send(o.ref, log), Outcome(10501, ["before", "instead", "after"]))
        XCTAssertEqual(try o.setClass(base), copy)
        XCTAssertEqual(try send(o.ref, log), Outcome(10002, ["before", "instead", "after"]))
        XCTAssertEqual(try o.setClass(copy), base)
        tokens[1].remove()
        XCTAssertEqual(try send(o.ref, log), Outcome(10501, ["before", "after"]))
        tokens[0].remove()
        tokens[2].remove()
        XCTAssertEqual(sf_object_isa(o.raw), copy.raw)
        XCTAssertEqual(hiddenEntries(copy), 0)
        XCTAssertEqual(hiddenEntries(base), 0)
        try o.setClass(base)
        XCTAssertNoThrow(try copy.dispose())
    }

    /// A class that lacks a hooked method (or has it with other types) is refused: the hooks
    /// would have nothing to run around. Nothing changes.
    func testSwapToAClassWithoutTheHookedMethodIsRefused() throws {
        let base = try makeClass("SwapRefused")
        try base.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        let bare = try makeClass("SwapRefusedBare")
        let other = try makeClass("SwapRefusedTypes")
        try other.addMethod("value:") { (_: ObjectRef, x: Double) in x }
        let o = try base.createInstance()
        let log = Locked<[String]>([])
        let tokens = try hookObject(o.ref, log)
        let isa = sf_object_isa(o.raw)
        for target in [bare, other] {
            let error = thrownError { try o.setClass(target) }
            guard case let .incompatibleClass(context)? = error else { return XCTFail("\(String(describing: error))") }
            XCTAssertEqual(context.className, base.name)
            XCTAssertEqual(context.target, target.name)
            XCTAssertTrue(context.reason?.contains("value:") ?? false, "\(context)")
            XCTAssertEqual(sf_object_isa(o.raw), isa, "nothing changed")
            XCTAssertEqual(hiddenEntries(target), 0, "no entry left on the refused class's hidden subclass")
        }
        XCTAssertEqual(try send(o.ref, log), Outcome(10002, ["before", "instead", "after"]))
        for t in tokens { t.remove() }
        XCTAssertNoThrow(try bare.dispose())
        XCTAssertNoThrow(try other.dispose())
    }

    // MARK: b. swapped first, then hooked

    func testSwappedObjectHookedThenHooksRemovedFirst() throws {
        let (base, kvo) = try makePair("SwapFirstHooksFirst")
        let o = try base.createInstance()
        try o.setClass(kvo)
        let log = Locked<[String]>([])
        let tokens = try hookObject(o.ref, log)
        XCTAssertEqual(o.runtimeClass, kvo)
        XCTAssertEqual(try send(o.ref, log), Outcome(11011, ["before", "instead", "after"]), "hooks and the KVO override both ran")
        for t in tokens { t.remove() }
        XCTAssertEqual(sf_object_isa(o.raw), kvo.raw)
        XCTAssertEqual(try send(o.ref, log), Outcome(1011, []))
        XCTAssertEqual(try o.setClass(base), kvo)
        XCTAssertEqual(sf_object_isa(o.raw), base.raw)
        XCTAssertNoThrow(try kvo.dispose())
    }

    func testSwappedObjectHookedThenClassRestoredFirst() throws {
        let (base, kvo) = try makePair("SwapFirstRestoreFirst")
        let o = try base.createInstance()
        try o.setClass(kvo)
        let log = Locked<[String]>([])
        let tokens = try hookObject(o.ref, log)
        XCTAssertEqual(try o.setClass(base), kvo, "KVO sees the class it installed")
        XCTAssertEqual(try send(o.ref, log), Outcome(10002, ["before", "instead", "after"]))
        XCTAssertNoThrow(try kvo.dispose())
        for t in tokens { t.remove() }
        XCTAssertEqual(sf_object_isa(o.raw), base.raw)
        XCTAssertEqual(hiddenEntries(base), 0)
        XCTAssertEqual(try send(o.ref, log), Outcome(2, []))
    }

    // MARK: c. class hooks on the original class

    func testClassHooksOnTheOriginalRunForASwappedObject() throws {
        let (base, kvo) = try makePair("SwapClassHooks")
        let o = try base.createInstance()
        let log = Locked<[String]>([])
        let early = try base.hook("value:", .before) { ctx in
            let value: Int = try ctx.argument(at: 0)
            log.withLock { $0.append("class \(value)") }
        }
        try o.setClass(kvo)
        let late = try base.hook("value:", .after) { _ in log.withLock { $0.append("class after") } }
        XCTAssertEqual(try send(o.ref, log), Outcome(1011, ["class 10", "class after"]), "the override's super call reaches the hooked original")
        let own = try hookObject(o.ref, log)
        XCTAssertEqual(try send(o.ref, log), Outcome(11011, ["before", "instead", "class 10", "class after", "after"]))
        // Class restored, then the class hooks go, then the object's.
        try o.setClass(base)
        XCTAssertEqual(try send(o.ref, log), Outcome(10002, ["class 1", "before", "instead", "class after", "after"]))
        early.remove()
        late.remove()
        XCTAssertEqual(try send(o.ref, log), Outcome(10002, ["before", "instead", "after"]))
        for t in own { t.remove() }
        XCTAssertEqual(sf_object_isa(o.raw), base.raw)
        XCTAssertEqual(try send(o.ref, log), Outcome(2, []))
        XCTAssertTrue(base.hooks().isEmpty)
        XCTAssertNoThrow(try kvo.dispose())
    }

    func testClassHooksRemovedWhileTheObjectIsSwapped() throws {
        let (base, kvo) = try makePair("SwapClassHooksRemoved")
        let o = try base.createInstance()
        let log = Locked<[String]>([])
        let token = try base.hook("value:", .before) { _ in log.withLock { $0.append("class") } }
        try o.setClass(kvo)
        XCTAssertEqual(try send(o.ref, log), Outcome(1011, ["class"]))
        XCTAssertTrue(token.remove())
        XCTAssertEqual(try send(o.ref, log), Outcome(1011, []))
        XCTAssertEqual(sf_object_isa(o.raw), kvo.raw)
        try o.setClass(base)
        XCTAssertEqual(try send(o.ref, log), Outcome(2, []))
    }
}
