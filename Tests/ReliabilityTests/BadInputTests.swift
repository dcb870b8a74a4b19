import TestSupport
import XCTest
import Dispatch
import Foundation
import CDynamicRuntime
@testable import DynamicRuntime
@testable import MessageThrottle

/// What a caller gets for each bad input in docs/reliability.md ("Bad inputs"). Every row of
/// that table names one of these tests; the expected errors here are the documented ones.
/// This class: malformed encodings, wrong arguments, unknown and reserved selectors; rules,
/// discards, released targets, re-entrant and throwing hooks are in BadUseTests.
final class BadInputTests: BadInputTestCase {
    // MARK: - Malformed encodings

    func testMalformedEncodings() {
        let cases: [(String, Int, String)] = [
            ("", 0, "end of encoding: empty encoding; expected a return type"),
            ("q", 1, "end of encoding: a method encoding needs the receiver '@' and the selector ':' after the return type"),
            ("qq:", 1, "character 'q': the first argument is the receiver and must be '@' or '#', not 'q'"),
            ("q@q", 2, "character 'q': the second argument is the selector and must be ':', not 'q'"),
            ("v@:v", 3, "character 'v': 'v' (void) is only valid as a return type or pointee"),
            ("q@:x", 3, "character 'x': unknown type code"),
            ("[4i]@:", 0, "character '[': a C array cannot be returned; return a pointer ('^')"),
            ("q@:[16", 3, "character '[': array needs an element type after its count"),
            ("q@:[x@]", 4, "character 'x': '[' needs an element count, e.g. '[4i]'"),
            ("q@:[4iq]", 6, "character 'q': unterminated array; expected ']' after one element type"),
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
        XCTAssertThrowsError(try cls.addMethod(".cxx_destruct") { (_: ObjectRef) in }) { e in
            XCTAssertEqual(e as? RuntimeError, .reservedSelector(.init(className: cls.name, selector: ".cxx_destruct", reason: "the runtime releases ivars itself; override dealloc instead")))
            XCTAssertEqual((e as? RuntimeError)?.code, SF_ERR_RESERVED_SELECTOR)
        }
        // `dealloc` is an ordinary method, of the root's shape only.
        XCTAssertThrowsError(try cls.addMethod("dealloc") { (_: ObjectRef) in 1 }) { e in
            XCTAssertEqual(e as? RuntimeError, .signatureMismatch(.init(className: cls.name, selector: "dealloc", expected: "v@:", actual: "q@:")))
        }
        // Sent to a live object, the root dealloc refuses: only the last release tears down.
        XCTAssertThrowsError(try o.send("dealloc")) { e in
            guard case let .invalidArgument(c)? = e as? RuntimeError else { return XCTFail("\(e)") }
            XCTAssertEqual(c.className, cls.name)
            XCTAssertEqual(c.selector, "dealloc")
        }
        XCTAssertEqual(try o.send("add:to:", 1, 2) as Int, 3)
        // A throttle rule on one is refused the same way.
        XCTAssertThrowsError(try cls.limit("forwardInvocation:", oncePer: .seconds(1), in: Engine())) { e in
            guard case .runtime(.reservedSelector)? = e as? ThrottleError else { return XCTFail("\(e)") }
        }
    }
}
