// Hooks asked for by class name before the class is registered (InterposeKit's whenAvailable):
// when they go on, in which order, what removing them does in each state, and what a class
// that cannot take them leaves behind.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// Something a hook body captures, to see when the runtime lets go of the body.
private final class Captured: Sendable {}

final class PendingHookTests: LiveObjectTestCase {
    private var pendingBaseline = 0

    override func setUp() {
        super.setUp()
        pendingBaseline = HookRegistry.pendingHookCount
    }

    /// Every test leaves the pending table as it found it.
    override func tearDown() {
        XCTAssertEqual(HookRegistry.pendingHookCount, pendingBaseline, "no pending entry left behind")
        super.tearDown()
    }

    /// An allocated, unregistered class whose `value:` answers x + 1.
    private func allocateCounter(_ name: String, superclass: RuntimeClass? = nil) throws -> RuntimeClass {
        let cls = try RuntimeClass.allocate(name: name, superclass: superclass)
        try cls.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        return cls
    }

    /// An after hook that adds `amount` to the answer and counts its calls.
    private func adding(_ amount: Int, _ calls: Locked<Int>) -> @Sendable (HookContext) throws -> Void {
        { ctx in
            calls.withLock { $0 += 1 }
            try ctx.setReturnValue(try ctx.returnValue(as: Int.self) + amount)
        }
    }

    private func isWaiting(_ p: PendingHook) -> Bool { p.state == .waiting }
    private func isRemoved(_ p: PendingHook) -> Bool { p.state == .removed }
    private func failure(_ p: PendingHook) -> RuntimeError? { if case let .failed(e) = p.state { e } else { nil } }

    /// A `.before` hook on `value:` waiting for `name`, whose body counts its calls in `calls`
    /// and holds a `Captured`, handed back through `captured` (which the caller keeps weak).
    private func waitingHook(_ name: String, counting calls: Locked<Int>, holding captured: inout Captured?) throws -> PendingHook {
        let c = Captured()
        captured = c
        return try RuntimeClass.hook(whenRegistered: name, "value:", .before) { _ in
            withExtendedLifetime(c) { calls.withLock { $0 += 1 } }
        }
    }

    // MARK: - When the hook goes on

    func testAHookAskedForBeforeRegistrationRunsOnTheFirstSend() throws {
        let name = uniqueName("PendingBefore")
        let calls = Locked(0)
        let pending = try RuntimeClass.hook(whenRegistered: name, "value:", .after, adding(1000, calls))
        XCTAssertTrue(isWaiting(pending))
        XCTAssertNil(pending.token)
        XCTAssertEqual(HookRegistry.pendingHookCount, pendingBaseline + 1)
        XCTAssertEqual(pending.className, name)
        XCTAssertEqual(pending.selector, "value:")
        XCTAssertEqual(pending.position, .after)

        let cls = try allocateCounter(name)
        XCTAssertTrue(isWaiting(pending), "an allocated class is not registered yet")
        cls.register()
        let token = try XCTUnwrap(pending.token)
        XCTAssertEqual(pending.state, .installed(token))
        XCTAssertTrue(token.isActive)
        XCTAssertEqual(HookRegistry.pendingHookCount, pendingBaseline, "the entry left the table on install")
        XCTAssertEqual(cls.hooks(for: "value:").map(\.identifier), [token.identifier])

        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("value:", 1) as Int, 1002)
        XCTAssertEqual(calls.current, 1)
        cls.register()  // registering again installs nothing twice
        XCTAssertEqual(try o.send("value:", 1) as Int, 1002)
        XCTAssertEqual(cls.hooks(for: "value:").count, 1)
        XCTAssertTrue(pending.remove())
    }

    func testAHookAskedForARegisteredClassInstallsAtOnce() throws {
        let cls = try makeClass("PendingAfter")
        try cls.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        let o = try cls.createInstance()
        let calls = Locked(0)
        let pending = try RuntimeClass.hook(whenRegistered: cls.name, "value:", .after, adding(1000, calls))
        XCTAssertTrue(pending.token?.isActive ?? false)
        XCTAssertEqual(HookRegistry.pendingHookCount, pendingBaseline)
        XCTAssertEqual(try o.send("value:", 2) as Int, 1003)
        XCTAssertTrue(pending.remove())
        XCTAssertEqual(try o.send("value:", 2) as Int, 3)
        XCTAssertEqual(calls.current, 1)
    }

    func testAClassOfAnotherNameDoesNotInstallIt() throws {
        let name = uniqueName("PendingOther")
        let calls = Locked(0)
        let pending = try RuntimeClass.hook(whenRegistered: name, "value:", .after, adding(1000, calls))
        // A longer name, a shorter one and one differing in case: none is the name.
        let others = try [name + "x", String(name.dropLast()), name.uppercased()].map { n -> RuntimeClass in
            let c = try allocateCounter(n)
            c.register()
            return c
        }
        XCTAssertTrue(isWaiting(pending))
        for c in others {
            XCTAssertEqual(try c.createInstance().send("value:", 1) as Int, 2)
            XCTAssertEqual(c.hooks(for: "value:"), [])
        }
        XCTAssertEqual(calls.current, 0)
        XCTAssertTrue(pending.remove())
    }

    func testHooksWaitingForOneNameInstallInTheOrderAskedFor() throws {
        let name = uniqueName("PendingOrder")
        let log = Locked<[String]>([])
        func note(_ s: String) -> @Sendable (HookContext) throws -> Void { { _ in log.withLock { $0.append(s) } } }
        let asked = [
            try RuntimeClass.hook(whenRegistered: name, "value:", .before, note("before 1")),
            try RuntimeClass.hook(whenRegistered: name, "value:", .instead) { ctx in
                log.withLock { $0.append("instead 1") }
                try ctx.proceed()
            },
            try RuntimeClass.hook(whenRegistered: name, "value:", .after, note("after 1")),
            try RuntimeClass.hook(whenRegistered: name, "value:", .before, note("before 2")),
            try RuntimeClass.hook(whenRegistered: name, "value:", .instead) { ctx in
                log.withLock { $0.append("instead 2") }
                try ctx.proceed()
            },
            try RuntimeClass.hook(whenRegistered: name, "value:", .after, note("after 2")),
        ]
        let cls = try allocateCounter(name)
        cls.register()
        XCTAssertEqual(try cls.createInstance().send("value:", 1) as Int, 2)
        // As if hook(_:_:) had been called in that order: instead hooks run newest first.
        XCTAssertEqual(log.current, ["before 1", "before 2", "instead 2", "instead 1", "after 1", "after 2"])
        let ids = asked.map { $0.token!.identifier }
        XCTAssertEqual(cls.hooks(for: "value:").map(\.identifier), [ids[0], ids[3], ids[4], ids[1], ids[2], ids[5]])
        XCTAssertEqual(ids.map(\.rawValue), ids.map(\.rawValue).sorted(), "identifiers handed out in the order asked for")
        for p in asked { XCTAssertTrue(p.remove()) }
    }

    func testAnInheritedMethodIsHookedOnTheSubclassOnly() throws {
        let base = try makeClass("PendingBase")
        try base.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        let name = uniqueName("PendingSub")
        let calls = Locked(0)
        let pending = try RuntimeClass.hook(whenRegistered: name, "value:", .after, adding(1000, calls))
        let sub = try RuntimeClass.allocate(name: name, superclass: base)
        sub.register()
        XCTAssertEqual(try sub.createInstance().send("value:", 1) as Int, 1002)
        XCTAssertEqual(try base.createInstance().send("value:", 1) as Int, 2)
        XCTAssertTrue(pending.remove())
        XCTAssertNil(sub.ownMethod(for: "value:"), "the subclass's own entry went with the hook")
        XCTAssertEqual(try sub.createInstance().send("value:", 1) as Int, 2)
    }

    func testEveryWayOfRegisteringInstallsIt() throws {
        // The one-step initializer.
        let calls = Locked(0)
        let direct = uniqueName("PendingDirect")
        let first = try RuntimeClass.hook(whenRegistered: direct, "description", .before) { _ in calls.withLock { $0 += 1 } }
        let cls = try RuntimeClass(name: direct)
        XCTAssertNotNil(failure(first), "registered without the method")

        // A copy made by duplicate(named:) is registered under its new name.
        let original = try makeClass("PendingOriginal")
        try original.addMethod("value:") { (_: ObjectRef, x: Int) in x + 1 }
        let copyName = uniqueName("PendingCopy")
        let copyHook = try RuntimeClass.hook(whenRegistered: copyName, "value:", .after, adding(1000, calls))
        let copy = try original.duplicate(named: copyName)
        XCTAssertEqual(try copy.createInstance().send("value:", 1) as Int, 1002)
        XCTAssertEqual(try original.createInstance().send("value:", 1) as Int, 2)
        XCTAssertTrue(copyHook.remove())

        // An alias registered later: the hook goes on the class that takes it.
        let alias = uniqueName("PendingAlias")
        let aliasHook = try RuntimeClass.hook(whenRegistered: alias, "value:", .after, adding(1000, calls))
        try original.registerAlias(alias)
        XCTAssertEqual(try original.createInstance().send("value:", 1) as Int, 1002)
        XCTAssertTrue(aliasHook.remove())
        // An alias registered already counts as the class's name.
        let viaAlias = try RuntimeClass.hook(whenRegistered: alias, "value:", .after, adding(1000, calls))
        XCTAssertEqual(original.hooks(for: "value:").map(\.identifier), [viaAlias.token!.identifier])
        XCTAssertTrue(viaAlias.remove())
        XCTAssertEqual(calls.current, 2)
        _ = cls
    }

    func testAOneShotHookWaitsAndThenRemovesItselfAfterItsFirstCall() throws {
        let name = uniqueName("PendingOnce")
        let calls = Locked(0)
        let pending = try RuntimeClass.hook(whenRegistered: name, "value:", .after, options: .removeAfterFirstCall,
                                            adding(1000, calls))
        let cls = try allocateCounter(name)
        cls.register()
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("value:", 1) as Int, 1002)
        XCTAssertEqual(try o.send("value:", 1) as Int, 2)
        XCTAssertFalse(pending.token!.isActive)
        XCTAssertFalse(pending.remove(), "the hook had gone already")
        XCTAssertTrue(isRemoved(pending))
    }

    // MARK: - Removing

    func testAHookRemovedWhileWaitingNeverInstallsAndIsReleased() throws {
        let name = uniqueName("PendingCancel")
        let calls = Locked(0)
        weak var captured: Captured?
        let pending = try waitingHook(name, counting: calls, holding: &captured)
        XCTAssertNotNil(captured, "the waiting hook holds its body")
        XCTAssertEqual(HookRegistry.pendingHookCount, pendingBaseline + 1)
        XCTAssertTrue(pending.remove())
        XCTAssertNil(captured, "the body is let go when the hook is dropped")
        XCTAssertEqual(HookRegistry.pendingHookCount, pendingBaseline, "the entry left the table")
        XCTAssertFalse(pending.remove(), "removing twice does nothing")
        XCTAssertTrue(isRemoved(pending))

        let cls = try allocateCounter(name)
        let imp = cls.ownMethod(for: "value:")!.implementation
        cls.register()
        XCTAssertTrue(isRemoved(pending))
        XCTAssertEqual(try cls.createInstance().send("value:", 1) as Int, 2)
        XCTAssertEqual(calls.current, 0)
        XCTAssertEqual(cls.hooks(for: "value:"), [])
        XCTAssertEqual(cls.ownMethod(for: "value:")!.implementation, imp)
    }

    func testDroppingTheObjectOfAWaitingHookKeepsItWaiting() throws {
        let name = uniqueName("PendingDropped")
        let calls = Locked(0)
        // As with a HookToken, letting go of the handle does not take the hook back.
        try RuntimeClass.hook(whenRegistered: name, "value:", .after, adding(1000, calls))
        let cls = try allocateCounter(name)
        cls.register()
        XCTAssertEqual(try cls.createInstance().send("value:", 1) as Int, 1002)
        let listed = cls.hooks(for: "value:")
        XCTAssertEqual(listed.count, 1)
        XCTAssertTrue(cls.removeHook(listed[0].identifier))
    }

    func testRemovingAnInstalledHookRestoresTheExactOriginal() throws {
        let name = uniqueName("PendingRemove")
        let calls = Locked(0)
        let pending = try RuntimeClass.hook(whenRegistered: name, "value:", .instead) { ctx in
            calls.withLock { $0 += 1 }
            try ctx.setReturnValue(-1)
        }
        let cls = try allocateCounter(name)
        let original = cls.ownMethod(for: "value:")!.implementation
        cls.register()
        XCTAssertNotEqual(cls.ownMethod(for: "value:")!.implementation, original, "the trampoline is in")
        let o = try cls.createInstance()
        XCTAssertEqual(try o.send("value:", 1) as Int, -1)
        let token = try XCTUnwrap(pending.token)

        XCTAssertTrue(pending.remove())
        XCTAssertTrue(isRemoved(pending))
        XCTAssertNil(pending.token)
        XCTAssertFalse(token.isActive)
        XCTAssertEqual(cls.ownMethod(for: "value:")!.implementation, original)
        XCTAssertEqual(try o.send("value:", 1) as Int, 2)
        XCTAssertEqual(calls.current, 1)
        XCTAssertFalse(pending.remove(), "removing twice does nothing")
        XCTAssertFalse(token.remove())
        XCTAssertEqual(cls.ownMethod(for: "value:")!.implementation, original)
    }

    // MARK: - What a class cannot take

    func testAClassWithoutTheMethodLeavesTheHookFailed() throws {
        let name = uniqueName("PendingMissing")
        let calls = Locked(0)
        weak var captured: Captured?
        let pending = try waitingHook(name, counting: calls, holding: &captured)
        let cls = try RuntimeClass.allocate(name: name)
        try cls.addMethod("other:") { (_: ObjectRef, x: Int) in x }
        cls.register()
        let error = try XCTUnwrap(failure(pending))
        XCTAssertTrue(error.isHookFailed, "\(error)")
        XCTAssertEqual(error.className, name)
        XCTAssertEqual(error.selector, "value:")
        XCTAssertNil(pending.token)
        XCTAssertNil(captured, "a failed hook's body is let go")
        XCTAssertFalse(pending.remove(), "nothing to remove")
        XCTAssertNotNil(failure(pending), "still failed")
        XCTAssertEqual(try cls.createInstance().send("other:", 5) as Int, 5)
        XCTAssertEqual(cls.hooks(), [])

        // The same at once, for a class registered already.
        let now = try RuntimeClass.hook(whenRegistered: name, "value:", .before) { _ in }
        XCTAssertEqual(failure(now), error)
    }

    func testTypesOtherThanTheMethodsLeaveTheHookFailed() throws {
        let name = uniqueName("PendingTypes")
        let later = try RuntimeClass.hook(whenRegistered: name, "value:", .before, expecting: "d@:d") { _ in }
        let cls = try allocateCounter(name)
        cls.register()
        let error = try XCTUnwrap(failure(later))
        XCTAssertTrue(error.isSignatureMismatch, "\(error)")
        XCTAssertEqual(error.className, name)
        XCTAssertEqual(error.selector, "value:")
        XCTAssertEqual(try cls.createInstance().send("value:", 1) as Int, 2)
        // The matching types install; a failed hook before it does not disturb it.
        let fits = try RuntimeClass.hook(whenRegistered: name, "value:", .before, expecting: "q@:q") { _ in }
        XCTAssertTrue(fits.token?.isActive ?? false)
        XCTAssertTrue(fits.remove())
    }

    func testWhatNoClassCouldChangeIsThrownAtOnce() throws {
        let name = uniqueName("PendingBad")
        assertThrows(.invalidArgument(.init(selector: "value:", operation: "hook a class when it is registered",
                                            expected: "a class name, non-empty and without NUL", actual: "\"\""))) {
            try RuntimeClass.hook(whenRegistered: "", "value:") { _ in }
        }
        XCTAssertTrue(thrownError { try RuntimeClass.hook(whenRegistered: "a\0b", "value:") { _ in } }?.isInvalidArgument ?? false)
        let reserved = thrownError { try RuntimeClass.hook(whenRegistered: name, "forwardInvocation:") { _ in } }
        XCTAssertTrue(reserved?.isReservedSelector ?? false)
        XCTAssertEqual(reserved?.className, name)
        XCTAssertEqual(reserved?.selector, "forwardInvocation:")
        XCTAssertTrue(thrownError { try RuntimeClass.hook(whenRegistered: name, ".cxx_destruct") { _ in } }?.isReservedSelector ?? false)
        XCTAssertTrue(thrownError { try RuntimeClass.hook(whenRegistered: name, "value:", expecting: "q@:{") { _ in } }?.isMalformedEncoding ?? false)
        XCTAssertEqual(HookRegistry.pendingHookCount, pendingBaseline, "nothing was kept")
    }
}
