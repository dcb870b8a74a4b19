import TestSupport
import XCTest
import Dispatch
import Foundation
import CDynamicRuntime
@testable import DynamicRuntime
@testable import MessageThrottle

/// What a caller gets for each bad use in docs/reliability.md ("Bad inputs"): conflicting rules,
/// double discard and remove, released targets, re-entrant sends from hooks, hooks and methods that
/// throw. Every row of that table names one of these tests or one of BadInputTests'.
final class BadUseTests: BadInputTestCase {
    // MARK: - Conflicting rules

    func testConflictingRules() throws {
        let (base, o) = try calculator()
        let sub = try RuntimeClass(name: name("Sub"), superclass: base)
        let engine = Engine(executor: ManualExecutor(clock: ManualClock()))
        let rule = try base.limit("add:to:", oncePer: .seconds(1), mode: .firstly, in: engine)
        XCTAssertThrowsError(try sub.limit("add:to:", oncePer: .seconds(1), in: engine)) { e in
            XCTAssertEqual(e as? ThrottleError, .conflictingRule(selector: "add:to:", target: "instances of \(sub.name)",
                                                                existingOn: "instances of \(base.name)"))
            XCTAssertEqual((e as? ThrottleError)?.description,
                           "cannot apply a rule for 'add:to:' on instances of \(sub.name): instances of \(base.name) already has a rule for it in the same class hierarchy")
        }
        // One rule per hierarchy across engines, too.
        XCTAssertThrowsError(try base.limit("add:to:", oncePer: .seconds(1), in: Engine())) { e in
            guard case .conflictingRule? = e as? ThrottleError else { return XCTFail("\(e)") }
        }
        XCTAssertThrowsError(try engine.apply(rule)) { e in
            XCTAssertEqual(e as? ThrottleError, .alreadyApplied(selector: "add:to:", target: "instances of \(base.name)"))
        }
        // An instance rule does not conflict with its class's rule: it takes precedence.
        let instanceRule = try o.limit("add:to:", oncePer: .seconds(1), mode: .firstly, in: engine)
        XCTAssertTrue(engine.rule(for: o, selector: "add:to:") === instanceRule)
        // A rule for a selector nobody implements.
        XCTAssertThrowsError(try base.limit("missing", oncePer: .seconds(1), in: engine)) { e in
            XCTAssertEqual(e as? ThrottleError, .runtime(.hookFailed(.init(className: base.name, selector: "missing", reason: "instances do not respond to it"))))
        }
        engine.discardAll()
    }

    // MARK: - Double discard, double remove

    func testDoubleDiscardAndDoubleRemove() throws {
        let (cls, o) = try calculator()
        let original = cls.ownMethod(for: "add:to:")!.implementation
        let engine = Engine(executor: ManualExecutor(clock: ManualClock()))
        let rule = try cls.limit("add:to:", oncePer: .seconds(1), in: engine)
        XCTAssertFalse(Engine().discard(rule), "another engine does not own it")
        XCTAssertTrue(rule.discard())
        XCTAssertFalse(rule.discard())
        XCTAssertFalse(engine.discard(rule))
        XCTAssertFalse(rule.isApplied)
        XCTAssertFalse(engine.discard(Rule(target: cls, selector: "add:to:", duration: .seconds(1))), "never applied")
        let token = try cls.hook("add:to:") { _ in }
        XCTAssertTrue(token.remove())
        XCTAssertFalse(token.remove())
        XCTAssertFalse(token.isActive)
        XCTAssertEqual(cls.ownMethod(for: "add:to:")!.implementation, original)
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        // A discarded rule can be applied again.
        try engine.apply(rule)
        XCTAssertTrue(rule.discard(pending: .flush))
    }

    // MARK: - Released targets

    func testReleasedTargets() throws {
        let (cls, _) = try calculator()
        let engine = Engine(executor: ManualExecutor(clock: ManualClock()))
        // An instance rule holds its object weakly and goes with it.
        var o: Object? = try cls.createInstance()
        let rule = try o!.limit("add:to:", oncePer: .seconds(1), mode: .last, in: engine)
        XCTAssertTrue(rule.isApplied)
        o = nil
        XCTAssertFalse(rule.isApplied)
        XCTAssertTrue(engine.rules.isEmpty)
        XCTAssertThrowsError(try engine.apply(rule)) { e in
            XCTAssertEqual(e as? ThrottleError, .targetDeallocated(selector: "add:to:"))
        }
        // A captured call keeps its target alive until it is replayed and dropped.
        let before = Runtime.liveObjectCount
        nonisolated(unsafe) var kept: Invocation?
        let token = try cls.hook("add:to:", .instead) { ctx in kept = ctx.makeInvocation() }
        var target: Object? = try cls.createInstance()
        weak var weakHandle = target
        let ref = try WeakReference(target!)
        XCTAssertEqual(try target!.send("add:to:", 20, 22) as Int, 0)
        token.remove()
        target = nil
        XCTAssertNil(weakHandle)
        XCTAssertNotNil(ref.object, "the invocation retained the target")
        try kept!.invoke()
        XCTAssertEqual(try kept!.returnValue(as: Int.self), 42)
        kept = nil
        XCTAssertNil(ref.object)
        XCTAssertEqual(Runtime.liveObjectCount, before)
    }

    // MARK: - Re-entrant sends from inside a hook

    func testReentrantSendFromAHook() throws {
        let (cls, o) = try calculator()
        nonisolated(unsafe) var depth = 0
        nonisolated(unsafe) var seen: [Int] = []
        let token = try cls.hook("add:to:", .before) { ctx in
            let a = try ctx.argument(at: 0, as: Int.self)
            seen.append(a)
            depth += 1
            defer { depth -= 1 }
            if depth == 1 {
                // The same message to the same object, from inside its own hook.
                let inner: Int = try ctx.target.send("add:to:", a * 10, 0)
                XCTAssertEqual(inner, a * 10)
            }
        }
        defer { token.remove() }
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(seen, [1, 10])
    }

    func testReentrantSendInsideAThrottledMethod() throws {
        let cls = try RuntimeClass(name: name("Reentrant"))
        nonisolated(unsafe) var calls: [Int] = []
        try cls.addMethod("tick:") { (me: ObjectRef, n: Int) -> Int in
            calls.append(n)
            // Re-entrant: the rule performing this call lets its own nested send through.
            if n > 0 { return try me.send("tick:", n - 1) as Int + 1 }
            return 0
        }
        let o = try cls.createInstance()
        let engine = Engine(executor: ManualExecutor(clock: ManualClock()))
        let rule = try cls.limit("tick:", oncePer: .seconds(3600), mode: .firstly, in: engine)
        defer { rule.discard() }
        XCTAssertEqual(try o.send("tick:", 3) as Int, 3)
        XCTAssertEqual(calls, [3, 2, 1, 0])
        XCTAssertEqual(try o.send("tick:", 3) as Int, 0, "dropped: inside the window")
        XCTAssertEqual(calls, [3, 2, 1, 0])
    }

    func testHookRemovingItselfWhileRunning() throws {
        let (cls, o) = try calculator()
        let original = cls.ownMethod(for: "add:to:")!.implementation
        nonisolated(unsafe) var token: HookToken?
        nonisolated(unsafe) var runs = 0
        token = try cls.hook("add:to:", .before) { _ in
            runs += 1
            XCTAssertTrue(token!.remove())
        }
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        XCTAssertEqual(runs, 1)
        XCTAssertEqual(cls.ownMethod(for: "add:to:")!.implementation, original)
    }

    // MARK: - Hooks that throw

    struct HookError: Error, CustomStringConvertible { var description: String { "hook refused" } }

    func testHookThatThrows() throws {
        let cls = try RuntimeClass(name: name("Throwing"))
        nonisolated(unsafe) var originalRuns = 0
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) -> Int in originalRuns += 1; return a + b }
        let o = try cls.createInstance()

        // Before: the original does not run, the caller gets the error naming the method.
        var token = try cls.hook("add:to:", .before) { _ in throw HookError() }
        XCTAssertThrowsError(try o.send("add:to:", 1, 2) as Int) { e in
            XCTAssertEqual(e as? RuntimeError, .implementationFailed(.init(className: cls.name, selector: "add:to:", underlying: HookError())))
            XCTAssertEqual((e as? RuntimeError)?.description, "-[\(cls.name) add:to:] failed: hook refused")
        }
        XCTAssertEqual(originalRuns, 0)
        // Dynamic and C senders get the same error.
        XCTAssertThrowsError(try o.send("add:to:", 1, 2))
        var a = 1, b = 2, out = -1
        let status = withUnsafeMutablePointer(to: &a) { pa in
            withUnsafeMutablePointer(to: &b) { pb in
                var args: [UnsafeMutableRawPointer?] = [UnsafeMutableRawPointer(pa), UnsafeMutableRawPointer(pb)]
                return sf_msg_send(o.raw, sf_sel_registerName("add:to:"), &out, &args)
            }
        }
        XCTAssertEqual(status, SF_ERR_FORWARDING)
        XCTAssertEqual(String(cString: sf_last_error_message()), "-[\(cls.name) add:to:] failed: hook refused")
        XCTAssertEqual(out, 0, "a raw caller gets a zero return")
        token.remove()
        // Nothing stays pending: the next send is clean.
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)

        // Instead, after proceeding: the original ran, the caller still gets the error.
        token = try cls.hook("add:to:", .instead) { ctx in
            try ctx.proceed()
            throw RuntimeError.invalidArgument(.init(className: "X", selector: "add:to:", reason: "after the fact"))
        }
        XCTAssertThrowsError(try o.send("add:to:", 1, 2) as Int) { e in
            XCTAssertEqual(e as? RuntimeError, .invalidArgument(.init(className: "X", selector: "add:to:", reason: "after the fact")),
                           "a RuntimeError passes through unchanged")
        }
        XCTAssertEqual(originalRuns, 2)
        token.remove()

        // After hook on a rule-limited method: the error reaches the caller, the rule stays sane.
        let engine = Engine(executor: ManualExecutor(clock: ManualClock()))
        let rule = try cls.limit("add:to:", oncePer: .zero, in: engine)
        token = try cls.hook("add:to:", .after) { _ in throw HookError() }
        XCTAssertThrowsError(try o.send("add:to:", 1, 2) as Int)
        token.remove()
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        rule.discard()
    }

    func testMethodThatThrows() throws {
        let cls = try RuntimeClass(name: name("ThrowingMethod"))
        try cls.addMethod("fail") { (_: ObjectRef) throws -> Int in throw HookError() }
        let o = try cls.createInstance()
        XCTAssertThrowsError(try o.send("fail") as Int) { e in
            XCTAssertEqual(e as? RuntimeError, .implementationFailed(.init(className: cls.name, selector: "fail", underlying: HookError())))
        }
        XCTAssertThrowsError(try o.send("fail"))
    }
}
