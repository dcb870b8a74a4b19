import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// RuntimeError's structured context: a body's own error keeps its type, messages name the
/// visible class, the real selector or ivar, expected and actual, and never a placeholder.
final class ErrorContextTests: XCTestCase {
    struct Overdrawn: Error, Equatable { let amount: Int }

    private func account() throws -> (RuntimeClass, Object) {
        let cls = try makeClass("ErrAccount", ivars: [("balance", .int64)])
        try cls.addMethod("withdraw:") { (_: ObjectRef, amount: Int) throws -> Int in
            guard amount <= 10 else { throw Overdrawn(amount: amount - 10) }
            return 10 - amount
        }
        return (cls, try cls.createInstance())
    }

    func testABodysOwnErrorReachesTheSenderWithItsType() throws {
        let (cls, o) = try account()
        for send in [{ _ = try o.send("withdraw:", 15) as Int }, { _ = try o.send("withdraw:", 15) }] {
            do {
                try send()
                XCTFail("nothing was thrown")
            } catch let error as RuntimeError {
                guard case .implementationFailed = error else { return XCTFail("\(error)") }
                XCTAssertEqual(error.underlying as? Overdrawn, Overdrawn(amount: 5))
                XCTAssertEqual(error.className, cls.name)
                XCTAssertEqual(error.selector, "withdraw:")
                XCTAssertEqual(error.description, "-[\(cls.name) withdraw:] failed: Overdrawn(amount: 5)")
            }
        }
        // C senders get the status and the same message.
        var amount = 15, out = -1
        let status = withUnsafeMutablePointer(to: &amount) { p in
            var args: [UnsafeMutableRawPointer?] = [UnsafeMutableRawPointer(p)]
            return sf_msg_send(o.raw, sf_sel_registerName("withdraw:"), &out, &args)
        }
        XCTAssertEqual(status, SF_ERR_FORWARDING)
        XCTAssertEqual(String(cString: sf_last_error_message()), "-[\(cls.name) withdraw:] failed: Overdrawn(amount: 5)")
    }

    func testInvocationsAndHooksKeepTheErrorsType() throws {
        let (cls, o) = try account()
        let inv = Invocation(signature: try Signature("q@:q"), target: o, selector: "withdraw:")
        try inv.setArgument(12, at: 0)
        XCTAssertEqual(thrownError { try inv.invoke() }?.underlying as? Overdrawn, Overdrawn(amount: 2))

        let token = try cls.hook("withdraw:", .before) { ctx in
            let amount: Int = try ctx.argument(at: 0)
            if amount < 0 { throw Overdrawn(amount: amount) }
        }
        defer { token.remove() }
        let e = thrownError { try o.send("withdraw:", -3) as Int }
        XCTAssertEqual(e?.underlying as? Overdrawn, Overdrawn(amount: -3), "a hook's own error, typed")
        XCTAssertEqual(e?.className, cls.name)
    }

    func testWrongTypeSendsAfterHookingNameTheVisibleClass() throws {
        let cls = try makeClass("ErrCounter")
        try cls.addMethod("add:") { (_: ObjectRef, n: Int) -> Int in n }
        let o = try cls.createInstance()
        try o.hook("add:", .before) { _ in }.remove()
        for error in [thrownError { try o.send("add:", 1.5) as Int }, thrownError { try o.send("add:", 1.5) }] {
            XCTAssertEqual(error?.className, cls.name)
            XCTAssertFalse(error?.description.contains("#hooked") ?? true, "\(String(describing: error))")
        }
        XCTAssertEqual(thrownError { try o.send("add:", 1.5) }?.description,
                       "-[\(cls.name) add:]: argument 1: expected 'q', got 'd' (Double)")
    }

    func testIvarErrorsNameTheIvar() throws {
        let (cls, o) = try account()
        let missing = thrownError { try o.value(ofIvar: "nope", as: Int.self) }
        XCTAssertEqual(missing, .invalidArgument(.init(className: cls.name, ivar: "nope",
                                                       expected: "an ivar of the class chain", actual: "no ivar of that name")))
        XCTAssertEqual(missing?.description,
                       "ivar 'nope' of '\(cls.name)': expected an ivar of the class chain, got no ivar of that name")
        let wrongType = thrownError { try o.value(ofIvar: "balance", as: Double.self) }
        XCTAssertEqual(wrongType?.context.ivar, "balance")
        XCTAssertEqual(wrongType?.expected, "q")
        XCTAssertEqual(wrongType?.actual, "d")
        XCTAssertEqual(wrongType?.description, "ivar 'balance' of '\(cls.name)' has signature \"q\", but the accessor uses \"d\"")
    }

    func testAHooksTypeCheckNamesTheHookNotTheCaller() throws {
        let (cls, o) = try account()
        let token = try cls.hook("withdraw:", .before) { ctx in _ = try ctx.argument(at: 0, as: Double.self) }
        defer { token.remove() }
        let e = thrownError { try o.send("withdraw:", 1) as Int }
        XCTAssertEqual(e, .signatureMismatch(.init(className: cls.name, selector: "withdraw:", argument: 1,
                                                   operation: "the hook", expected: "q", actual: "d")))
        XCTAssertEqual(e?.description, "-[\(cls.name) withdraw:] has argument 1 of type \"q\", but the hook uses \"d\"")
    }

    func testBadCHandlesNameWhatWasExpectedWithoutPlaceholders() {
        XCTAssertNil(sf_class_createInstance(nil))
        XCTAssertEqual(String(cString: sf_last_error_message()), "invalid argument: expected a class, got NULL")
        XCTAssertEqual(sf_class_addMethod(nil, nil, nil, nil), SF_ERR_INVALID_ARGUMENT)
        let message = String(cString: sf_last_error_message())
        XCTAssertFalse(message.contains("[-") || message.contains(" -]"), message)
        XCTAssertEqual(message, "invalid argument: expected a class, got NULL")
        XCTAssertEqual(RuntimeError.nullArgument("a selector").description, "invalid argument: expected a selector, got NULL")
    }

    func testContextsCompareByEveryFieldAndUnderlyingErrorsByValue() {
        let a = RuntimeError.implementationFailed(.init(className: "C", selector: "s", underlying: Overdrawn(amount: 1)))
        XCTAssertEqual(a, .implementationFailed(.init(className: "C", selector: "s", underlying: Overdrawn(amount: 1))))
        XCTAssertNotEqual(a, .implementationFailed(.init(className: "C", selector: "s", underlying: Overdrawn(amount: 2))))
        XCTAssertNotEqual(a, .implementationFailed(.init(className: "C", selector: "t", underlying: Overdrawn(amount: 1))))
        XCTAssertEqual(a.code, SF_ERR_FORWARDING)
    }
}
