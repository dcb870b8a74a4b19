import TestSupport
import XCTest
import Dispatch
import Foundation
import CShims
@testable import DynamicRuntime
@testable import MessageThrottle

/// What a caller gets for each bad input in docs/reliability.md ("Bad inputs"). Every row of
/// that table names one of these tests; the expected errors here are the documented ones.
final class BadInputTests: XCTestCase {
    nonisolated(unsafe) private static var serial = 0
    /// A fresh class name per test (class names are process-wide).
    private func name(_ base: String) -> String {
        BadInputTests.serial += 1
        return "Bad.\(base).\(BadInputTests.serial)"
    }

    private func calculator() throws -> (RuntimeClass, Object) {
        let cls = try RuntimeClass(name: name("Calc"))
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        return (cls, try cls.createInstance())
    }

    private func encodingError(_ text: String) -> RuntimeError? {
        do {
            _ = try Signature(text)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Malformed encodings

    func testMalformedEncodings() {
        let cases: [(String, Int, String)] = [
            ("", 0, "end of encoding: empty encoding; expected a return type"),
            ("q", 1, "end of encoding: a method encoding needs the receiver '@' and the selector ':' after the return type"),
            ("qq:", 1, "character 'q': the first argument is the receiver and must be '@' or '#', not 'q'"),
            ("q@q", 2, "character 'q': the second argument is the selector and must be ':', not 'q'"),
            ("v@:v", 3, "character 'v': 'v' (void) is only valid as a return type or pointee"),
            ("q@:x", 3, "character 'x': unknown type code"),
            ("q@:@?", 3, "character '@': blocks ('@?') are not supported; pass a C function pointer ('^?')"),
            ("q@:[4i]", 3, "character '[': C arrays are not supported by value; pass a pointer ('^')"),
            ("q@:(U=ic)", 3, "character '(': unions are not supported by value; pass a pointer ('^')"),
            ("q@:b3", 3, "character 'b': bit fields are not supported"),
            ("q@:?", 3, "character '?': unknown type '?' is not supported"),
            ("q@:^", 3, "character '^': '^' needs a pointee type"),
            ("{P}@:", 0, "character '{': struct 'P' has no fields; its layout must be spelled out"),
            ("{P=}@:", 0, "character '{': struct 'P' has no fields"),
            ("{P=dd@:", 0, "character '{': unterminated struct 'P'; expected '}'"),
            ("q@:@\"Name", 3, "character '@': unterminated class name after '@'"),
            ("q@:{\u{0}=i}", 4, "character '\u{0}': NUL inside a struct name"),
            ("q@:" + String(repeating: "^", count: 40) + "i", 35, "character '^': types nested more than 32 deep"),
            ("v@:" + String(repeating: "q", count: 63), 66, "end of encoding: more than 64 arguments"),
        ]
        for (text, offset, reason) in cases {
            XCTAssertEqual(encodingError(text), .malformedEncoding(.init(actual: text, offset: offset, reason: reason)), text.debugDescription)
        }
        // The message names the encoding, the offset and the reason.
        XCTAssertEqual(encodingError("q@:x")?.description, "malformed type encoding \"q@:x\" at offset 3: character 'x': unknown type code")
        XCTAssertEqual(encodingError("q@:x")?.code, SF_ERR_BAD_ENCODING)
        // Compiler-style offsets and qualifiers are accepted and dropped from the canonical form.
        XCTAssertEqual(try Signature("q24@0:8q16").encoding, "q@:q")
        XCTAssertEqual(try Signature("Vv@:r*n^{P=dd}").encoding, "v@:*^{P=dd}")
    }

    func testMalformedEncodingInAddMethodAndCAPI() throws {
        let cls = try RuntimeClass(name: name("Enc"))
        let imp = IMP(address: UnsafeRawPointer(bitPattern: 0x1000))!
        XCTAssertThrowsError(try cls.addMethod("m", implementation: imp, types: "q@:x")) { e in
            XCTAssertEqual(e as? RuntimeError, .malformedEncoding(.init(actual: "q@:x", offset: 3, reason: "character 'x': unknown type code")))
        }
        // Declared types that disagree with the closure's.
        XCTAssertThrowsError(try cls.addMethod("n", types: "d@:d") { (_: ObjectRef, a: Int) in a }) { e in
            XCTAssertEqual(e as? RuntimeError, .signatureMismatch(.init(className: cls.name, selector: "n", expected: "d@:d", actual: "q@:q")))
        }
        // C: a status and a message, never a trap.
        XCTAssertEqual(sf_class_addMethod(cls.raw, sf_sel_registerName("c"), imp.pointer, "q@:x"), SF_ERR_BAD_ENCODING)
        XCTAssertEqual(String(cString: sf_last_error_message()), "malformed type encoding \"q@:x\" at offset 3: character 'x': unknown type code")
        XCTAssertEqual(sf_class_addMethod(cls.raw, sf_sel_registerName("c"), imp.pointer, nil), SF_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(String(cString: sf_last_error_message()), "-[\(cls.name) c]: expected a type encoding, got NULL")
    }

    // MARK: - Wrong argument counts and types

    func testWrongArgumentCountDynamic() throws {
        let (cls, o) = try calculator()
        XCTAssertThrowsError(try o.send("add:to:", 1)) { e in
            XCTAssertEqual(e as? RuntimeError, .invalidArgument(.init(className: cls.name, selector: "add:to:", expected: "2 argument(s) for 'q@:qq'", actual: "1")))
        }
        XCTAssertThrowsError(try o.send("add:to:", 1, 2, 3)) { e in
            XCTAssertEqual(e as? RuntimeError, .invalidArgument(.init(className: cls.name, selector: "add:to:", expected: "2 argument(s) for 'q@:qq'", actual: "3")))
        }
    }

    func testWrongArgumentTypeDynamic() throws {
        let (cls, o) = try calculator()
        XCTAssertThrowsError(try o.send("add:to:", 1, 2.5)) { e in
            XCTAssertEqual(e as? RuntimeError, .invalidArgument(.init(className: cls.name, selector: "add:to:", argument: 2, expected: "'q'", actual: "'d' (Double)")))
            XCTAssertEqual((e as? RuntimeError)?.description, "-[\(cls.name) add:to:]: argument 2: expected 'q', got 'd' (Double)")
        }
        XCTAssertThrowsError(try o.send("add:to:", 1, DynamicValue.cString(CString(nil)))) { e in
            XCTAssertEqual(e as? RuntimeError, .invalidArgument(.init(className: cls.name, selector: "add:to:", argument: 2, expected: "'q'", actual: "'*' (DynamicValue)")))
        }
    }

    func testWrongStructSizeDynamic() throws {
        let cls = try RuntimeClass(name: name("Struct"))
        try cls.addMethod("pair:", types: "v@:{Pair=dd}") { _, _ in }
        let o = try cls.createInstance()
        let pair = TypeEncoding.structure(name: "Pair", fields: [.double, .double])
        XCTAssertThrowsError(try o.send("pair:", DynamicValue.structure(pair, [1, 2, 3]))) { e in
            XCTAssertEqual(e as? RuntimeError, .invalidArgument(.init(className: cls.name, selector: "pair:", operation: "argument 1", expected: "a 16-byte struct '{Pair=dd}'", actual: "3 bytes")))
        }
        // A struct of another layout is a type error.
        let other = TypeEncoding.structure(name: "Other", fields: [.int32])
        XCTAssertThrowsError(try o.send("pair:", DynamicValue.structure(other, [0, 0, 0, 0]))) { e in
            XCTAssertEqual(e as? RuntimeError, .invalidArgument(.init(className: cls.name, selector: "pair:", argument: 1, expected: "'{Pair=dd}'", actual: "'{Other=i}' (DynamicValue)")))
        }
    }

    func testWrongTypesTyped() throws {
        let (cls, o) = try calculator()
        XCTAssertThrowsError(try o.send("add:to:", 1, 2.5) as Int) { e in
            XCTAssertEqual(e as? RuntimeError, .signatureMismatch(.init(className: cls.name, selector: "add:to:", expected: "q@:qq", actual: "q@:qd")))
            XCTAssertEqual((e as? RuntimeError)?.description, "-[\(cls.name) add:to:] has signature \"q@:qq\", but the sender uses \"q@:qd\"")
        }
        XCTAssertThrowsError(try o.send("add:to:", 1, 2) as Double) { e in
            XCTAssertEqual(e as? RuntimeError, .signatureMismatch(.init(className: cls.name, selector: "add:to:", expected: "q@:qq", actual: "d@:qq")))
        }
        XCTAssertThrowsError(try o.send("add:to:", 1) as Int) { e in
            XCTAssertEqual(e as? RuntimeError, .signatureMismatch(.init(className: cls.name, selector: "add:to:", expected: "q@:qq", actual: "q@:q")))
        }
        // Discarding a result is allowed: a void send of a non-void method.
        XCTAssertNoThrow(try o.send("add:to:", 1, 2, as: Void.self))
    }

    func testVoidArgumentToAnUnknownSelector() throws {
        let (_, o) = try calculator()
        // No method: the frame is built from the caller's own types, and 'v' cannot be one.
        XCTAssertThrowsError(try o.send("missing:", DynamicValue.void)) { e in
            XCTAssertEqual(e as? RuntimeError, .malformedEncoding(.init(actual: "v@:v", offset: 3, reason: "character 'v': 'v' (void) is only valid as a return type or pointee")))
        }
    }

    func testNilReceiver() throws {
        let r = try ObjectRef.nil.send("add:to:", 1, 2)
        guard case .void = r else { return XCTFail("\(r)") }
        XCTAssertEqual(try ObjectRef.nil.send("add:to:", 1, 2) as Int, 0)
        var out: Int = 99
        XCTAssertEqual(sf_msg_send(nil, sf_sel_registerName("x"), &out, nil), SF_ERR_NIL_RECEIVER)
        XCTAssertNil(sf_msg_lookup(nil, sf_sel_registerName("x")))
        XCTAssertEqual(sf_last_error(), SF_ERR_NIL_RECEIVER)
    }

    // MARK: - Unknown selectors

    func testUnknownSelector() throws {
        let (cls, o) = try calculator()
        XCTAssertThrowsError(try o.send("missing")) { e in
            XCTAssertEqual(e as? RuntimeError, .doesNotRecognizeSelector(.init(className: cls.name, selector: "missing", isClassMethod: false)))
            XCTAssertEqual((e as? RuntimeError)?.description, "-[\(cls.name) missing]: unrecognized selector sent to instance")
        }
        XCTAssertThrowsError(try cls.send("missing")) { e in
            XCTAssertEqual((e as? RuntimeError)?.description, "+[\(cls.name) missing]: unrecognized selector sent to class")
        }
        XCTAssertThrowsError(try o.send("missing", as: Int.self))
        // The last-resort stage observes, the sender still gets the error.
        nonisolated(unsafe) var observed: [String] = []
        try cls.setDoesNotRecognizeSelector { _, sel in observed.append(sel.name) }
        XCTAssertThrowsError(try o.send("other"))
        XCTAssertEqual(observed, ["other"])
        // C.
        var out = 0
        XCTAssertEqual(sf_msg_send(o.raw, sf_sel_registerName("missing"), &out, nil), SF_ERR_UNRECOGNIZED_SELECTOR)
        XCTAssertEqual(String(cString: sf_last_error_message()), "-[\(cls.name) missing]: unrecognized selector sent to instance")
        XCTAssertNil(sf_msg_lookup(o.raw, sf_sel_registerName("missing2")))
        XCTAssertEqual(sf_last_error(), SF_ERR_UNRECOGNIZED_SELECTOR)
    }

    func testForwardingLoop() throws {
        let cls = try RuntimeClass(name: name("Loop"))
        try cls.setForwardInvocation { inv in try inv.invoke() }
        let o = try cls.createInstance()
        XCTAssertThrowsError(try o.send("again", as: Int.self)) { e in
            XCTAssertEqual(e as? RuntimeError, .forwardingFailed(.init(className: cls.name, selector: "again", reason: "forwarding nested more than 64 levels; does forwardInvocation: or a forwarding target send the message back?")))
        }
    }

    // MARK: - Reserved selectors

    func testReservedSelectors() throws {
        let (cls, o) = try calculator()
        for sel in ["forwardInvocation:", "methodSignatureForSelector:", "forwardingTargetForSelector:",
                    "resolveInstanceMethod:", "resolveClassMethod:", "doesNotRecognizeSelector:"] {
            XCTAssertThrowsError(try cls.hook(Selector(sel)) { _ in }) { e in
                XCTAssertEqual(e as? RuntimeError, .reservedSelector(.init(className: cls.name, selector: sel, reason: "it drives forwarding itself; define the method instead of hooking it")))
            }
        }
        XCTAssertThrowsError(try cls.addMethod("dealloc") { (_: ObjectRef) in }) { e in
            XCTAssertEqual(e as? RuntimeError, .reservedSelector(.init(className: cls.name, selector: "dealloc", reason: "deallocation runs through dealloc observers (onDeallocate)")))
            XCTAssertEqual((e as? RuntimeError)?.code, SF_ERR_RESERVED_SELECTOR)
        }
        XCTAssertThrowsError(try cls.hook("dealloc") { _ in }) { e in
            guard case .reservedSelector? = e as? RuntimeError else { return XCTFail("\(e)") }
        }
        // Sending one is just an unrecognized selector when the class does not define it.
        XCTAssertThrowsError(try o.send("dealloc")) { e in
            XCTAssertEqual(e as? RuntimeError, .doesNotRecognizeSelector(.init(className: cls.name, selector: "dealloc", isClassMethod: false)))
        }
        // A throttle rule on one is refused the same way.
        XCTAssertThrowsError(try cls.limit("forwardInvocation:", oncePer: .seconds(1), in: Engine())) { e in
            guard case .runtime(.reservedSelector)? = e as? ThrottleError else { return XCTFail("\(e)") }
        }
    }

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
        let ref = WeakReference(target!)
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
