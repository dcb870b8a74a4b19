import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// A description quotes a long input as its prefix and length: a 64 kB encoding, or a name or
/// selector of 10 kB, must not make a message of that size. The error's fields keep it whole.
final class ErrorDescriptionLengthTests: XCTestCase {
    private func assertShort(_ error: RuntimeError, showing prefix: String, bytes: Int,
                             file: StaticString = #filePath, line: UInt = #line) {
        let text = error.description
        XCTAssertLessThan(text.utf8.count, 512, text, file: file, line: line)
        XCTAssertTrue(text.contains(prefix), text, file: file, line: line)
        XCTAssertTrue(text.contains("(\(bytes) bytes)"), text, file: file, line: line)
    }

    func testAHugeStructSignature() throws {
        let encoding = "v@:{Big=" + String(repeating: "d", count: 8_192) + "}"
        XCTAssertThrowsError(try Signature(encoding)) { error in
            guard let e = error as? RuntimeError, case let .malformedEncoding(context) = e else { return XCTFail("\(error)") }
            XCTAssertEqual(context.actual, encoding, "the field keeps the whole encoding")
            self.assertShort(e, showing: "v@:{Big=ddd", bytes: encoding.utf8.count)
        }
    }

    func testALongClassNameAndSelector() throws {
        let name = uniqueClassName("Long") + String(repeating: "N", count: 10_000)
        let cls = try RuntimeClass(name: name)
        let selector = "s" + String(repeating: "x", count: 10_000)
        do {
            _ = try cls.createInstance().send(Selector(selector)) as Int
            XCTFail("nothing was thrown")
        } catch {
            XCTAssertEqual(error.context.className, name)
            XCTAssertEqual(error.context.selector, selector)
            assertShort(error, showing: String(name.prefix(20)), bytes: name.utf8.count)
            XCTAssertTrue(error.description.contains("(\(selector.utf8.count) bytes)"), error.description)
        }
        XCTAssertThrowsError(try RuntimeClass(name: name)) { error in
            guard let e = error as? RuntimeError else { return XCTFail("\(error)") }
            self.assertShort(e, showing: String(name.prefix(20)), bytes: name.utf8.count)
        }
    }

    func testTheCMessageToo() throws {
        let encoding = "v@:{Big=" + String(repeating: "d", count: 8_192) + "}"
        let cls = try RuntimeClass(name: uniqueClassName("LongC"))
        let body: @convention(c) (sf_id?, sf_sel?) -> Void = { _, _ in }
        XCTAssertEqual(sf_class_addMethod(cls.raw, Selector("m").raw, unsafeBitCast(body, to: sf_imp.self), encoding),
                       SF_ERR_BAD_ENCODING)
        let message = String(cString: sf_last_error_message())
        XCTAssertTrue(message.contains("(\(encoding.utf8.count) bytes)"), message)
    }

    func testShortInputsAreQuotedWhole() {
        let e = RuntimeError.malformedEncoding(.init(actual: "q@:x", offset: 3, reason: "unknown type"))
        XCTAssertEqual(e.description, "malformed type encoding \"q@:x\" at offset 3: unknown type")
    }
}
