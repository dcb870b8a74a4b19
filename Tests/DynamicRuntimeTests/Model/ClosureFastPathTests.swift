// The typed send's fast path (a cached method whose key is the call's) and the slot's thunks
// (bench cases 3a-3c). What each shortcut skips must still be right: the error of a
// body names the receiver's visible class whichever class the lookup started at, and a miss,
// a cached forwarding marker or a different signature still takes its own path.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class ClosureFastPathTests: XCTestCase {
    struct Refused: Error, Equatable { let value: Int }

    override func setUp() {
        super.setUp()
        sf_tramp_set_enabled(1)
    }

    private func assertRefused(_ className: String, _ value: Int, file: StaticString = #filePath, line: UInt = #line,
                               _ body: () throws -> Int) {
        XCTAssertThrowsError(try body(), file: file, line: line) { e in
            guard case let .implementationFailed(context) = e as? RuntimeError else {
                return XCTFail("expected implementationFailed, got \(e)", file: file, line: line)
            }
            XCTAssertEqual(context.className, className, "the receiver's visible class", file: file, line: line)
            XCTAssertEqual(context.underlying as? Refused, Refused(value: value), file: file, line: line)
        }
    }

    /// A super send looks up in the superclass, but the error names the receiver's class.
    func testASuperSendsErrorNamesTheReceiversClass() throws {
        let base = try makeClass("FastBase")
        try base.addMethod("check:") { (_: ObjectRef, x: Int) in
            guard x >= 0 else { throw Refused(value: x) }
            return x
        }
        let sub = try makeClass("FastSub", superclass: base)
        try sub.addMethod("check:") { (_: ObjectRef, x: Int) in x + 1000 }
        let o = try sub.createInstance()
        XCTAssertEqual(try o.send("check:", 1) as Int, 1001)
        XCTAssertEqual(try o.asSuper(of: sub).send("check:", 1) as Int, 1)
        assertRefused(sub.name, -2) { try o.asSuper(of: sub).send("check:", -2) as Int }
        assertRefused(base.name, -3) { try base.createInstance().send("check:", -3) as Int }
    }

    /// A receiver with a per-object hook (on another method) has a hidden class: the send
    /// looks up there, and the error still names the class users see.
    func testAHiddenClassReceiversErrorNamesTheVisibleClass() throws {
        let cls = try makeClass("FastHidden")
        try cls.addMethod("check:") { (_: ObjectRef, x: Int) in
            guard x >= 0 else { throw Refused(value: x) }
            return x * 2
        }
        try cls.addMethod("other") { (_: ObjectRef) in 7 }
        let o = try cls.createInstance()
        let token = try o.hook("other", .before) { _ in }
        defer { token.remove() }
        XCTAssertNotEqual(sf_object_isa(o.raw), cls.raw, "the object has a hidden class now")
        XCTAssertEqual(try o.send("check:", 4) as Int, 8)
        assertRefused(cls.name, -1) { try o.send("check:", -1) as Int }
    }

    /// Sends that the fast path must hand on: a different signature (the general path's type
    /// check), a miss that forwarding answers (a cached marker the next time), and a method
    /// added after a miss was cached.
    func testWhatTheFastPathHandsOn() throws {
        let cls = try makeClass("FastHandOn")
        try cls.addMethod("half:") { (_: ObjectRef, x: Int) in x / 2 }
        let o = try cls.createInstance()
        XCTAssertThrowsError(try o.send("half:", 1.5) as Double) { e in
            guard case .signatureMismatch = e as? RuntimeError else { return XCTFail("\(e)") }
        }
        let target = try makeClass("FastTarget")
        try target.addMethod("late:") { (_: ObjectRef, x: Int) in x + 1 }
        let t = try target.createInstance()
        try cls.setForwardingTarget { _, sel in sel == "late:" ? t.ref : nil }
        for _ in 0..<3 { XCTAssertEqual(try o.send("late:", 1) as Int, 2, "forwarded, then from the cached marker") }
        try cls.addMethod("late:") { (_: ObjectRef, x: Int) in x + 100 }
        XCTAssertEqual(try o.send("late:", 1) as Int, 101, "the method added after the miss")
        XCTAssertThrowsError(try o.send("missing:", 1) as Int) { e in
            guard case .doesNotRecognizeSelector = e as? RuntimeError else { return XCTFail("\(e)") }
        }
    }
}
