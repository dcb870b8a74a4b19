import TestSupport
import CDynamicRuntime
import Glibc
import XCTest
@testable import DynamicRuntime

private let cMix: @convention(c) (sf_id?, sf_sel?, Int32, UnsafeMutableRawPointer?) -> Int = { _, _, a, _ in Int(a) }

/// method_getNumberOfArguments, method_copy/getReturnType and method_copy/getArgumentType from
/// the C API (objc4 test/methodArgs.m has the C side).
final class CAPIMethodTypeTests: XCTestCase {
    private func method(_ types: String) throws -> sf_method_t {
        let cls = try RuntimeClass(name: uniqueClassName("MethodTypes"))
        try cls.addMethod("mix::", implementation: imp(cMix), types: types)
        return try XCTUnwrap(sf_class_getInstanceMethod(cls.raw, Selector("mix::").raw))
    }

    private func take(_ p: UnsafeMutablePointer<CChar>?) -> String? {
        defer { free(p) }
        return p.map { String(cString: $0) }
    }

    func testCountsAndCopiesIncludeSelfAndCmd() throws {
        let m = try method("q24@0:8i16{Pair=dd}20")
        XCTAssertEqual(sf_method_getNumberOfArguments(m), 4)
        XCTAssertEqual(take(sf_method_copyReturnType(m)), "q")
        XCTAssertEqual((0..<4).map { take(sf_method_copyArgumentType(m, $0)) }, ["@", ":", "i", "{Pair=dd}"],
                       "canonical types, offsets dropped")
        XCTAssertEqual(sf_last_error(), SF_OK)
    }

    func testOutOfRangeAndNullAreNullWithAnError() throws {
        let m = try method("q@:i^v")
        XCTAssertNil(sf_method_copyArgumentType(m, 4))
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("0..<4"), String(cString: sf_last_error_message()))
        XCTAssertNil(sf_method_copyArgumentType(m, UInt32.max))
        XCTAssertNil(sf_method_copyArgumentType(nil, 0))
        XCTAssertNil(sf_method_copyReturnType(nil))
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        XCTAssertEqual(sf_method_getNumberOfArguments(nil), 0)
    }

    func testGetCopiesWithStrncpySemantics() throws {
        let m = try method("q@:{Pair=dd}^v")
        var buf = [CChar](repeating: 1, count: 32)
        sf_method_getArgumentType(m, 2, &buf, 4)
        XCTAssertEqual(Array(buf[0..<5]), Array("{Pai".utf8.map { CChar(bitPattern: $0) }) + [1],
                       "truncated, not terminated, nothing written past dst_len")
        buf = [CChar](repeating: 1, count: 32)
        sf_method_getArgumentType(m, 3, &buf, 8)
        XCTAssertEqual(Array(buf[0..<9]), [94, 118, 0, 0, 0, 0, 0, 0, 1], "'^v' then zeros up to dst_len")
        buf = [CChar](repeating: 1, count: 32)
        sf_method_getArgumentType(m, 9, &buf, 8)
        XCTAssertEqual(Array(buf[0..<9]), [0, 0, 0, 0, 0, 0, 0, 0, 1], "out of range: zero-filled")
        buf = [CChar](repeating: 1, count: 32)
        sf_method_getReturnType(m, &buf, 3)
        XCTAssertEqual(Array(buf[0..<4]), [113, 0, 0, 1])
        buf = [CChar](repeating: 1, count: 32)
        sf_method_getReturnType(nil, &buf, 3)
        XCTAssertEqual(Array(buf[0..<4]), [0, 0, 0, 1])
        sf_method_getReturnType(m, nil, 3)
        buf = [CChar](repeating: 1, count: 32)
        sf_method_getArgumentType(m, 0, &buf, 0)
        XCTAssertEqual(buf[0], 1, "a zero length writes nothing")
    }
}
