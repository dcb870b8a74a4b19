import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// The scalar type codes have one source, CDynamicRuntime/internal/sf_type_codes.h; C compiles
/// it in and scripts/generate-type-codes.py writes `TypeEncoding`'s switches from it. These tests
/// check at run time that what each language compiled lists the same rows.
final class TypeCodeTableTests: XCTestCase {
    private func swiftType(for character: UInt8) -> TypeEncoding? {
        character == UInt8(ascii: "^") ? .pointer(nil) : TypeEncoding.scalar(for: character)
    }

    func testEveryCRowHasTheSameRowInSwift() {
        let count = sf_type_code_count()
        XCTAssertEqual(count, TypeEncoding.singleCharacterScalars.count + 1, "one C row per Swift row (pointer included)")
        for i in 0..<count {
            let c = UInt8(bitPattern: sf_type_code_character(i))
            let name = String(UnicodeScalar(c))
            guard let t = swiftType(for: c) else { return XCTFail("C row '\(name)' has no Swift case") }
            XCTAssertEqual(t.scalarCode?.character, c, name)
            XCTAssertEqual(t.keyCode, UInt64(sf_type_code_key(CChar(bitPattern: c))), "key code of '\(name)'")
            XCTAssertNotNil(sf_ffi_type_for_code(CChar(bitPattern: c)), "libffi type of '\(name)'")
        }
    }

    func testEverySwiftRowIsInC() throws {
        for t in TypeEncoding.singleCharacterScalars + [.pointer(nil)] {
            let row = try XCTUnwrap(t.scalarCode, "\(t)")
            XCTAssertEqual(UInt64(sf_type_code_key(CChar(bitPattern: row.character))), row.key, "\(t)")
            XCTAssertNotEqual(row.key, 0, "\(t)")
            XCTAssertLessThan(row.key, 32, "a key code has 5 bits: \(t)")
            XCTAssertNotNil(t.scalarFFIType, "\(t)")
        }
    }

    func testEncodingAndParserUseTheTable() throws {
        for t in TypeEncoding.singleCharacterScalars where t != .void {
            XCTAssertEqual(t.encoding.utf8.count, 1)
            let sig = try Signature("v@:" + t.encoding)
            XCTAssertEqual(sig.argumentTypes[2], t)
        }
        XCTAssertEqual(try Signature("v@:^q").argumentTypes[2], .pointer(.int64))
        XCTAssertEqual(TypeEncoding.pointer(.int8).keyCode, TypeEncoding.pointerKeyCode)
        XCTAssertEqual(UnsafeRawPointer.keyCode, TypeEncoding.pointerKeyCode)
        XCTAssertEqual(OpaquePointer.returnKeyCode, TypeEncoding.pointerKeyCode)
        XCTAssertEqual(TypeEncoding.structure(name: "P", fields: [.double]).keyCode, 0)
        let longDouble = try XCTUnwrap(sf_ffi_type_for_code(CChar(bitPattern: UInt8(ascii: "D"))), "long double has a row")
        XCTAssertEqual(sf_ffi_type_size(longDouble), MemoryLayout<Float80>.stride)
        XCTAssertEqual(sf_ffi_type_alignment(longDouble), 16)
        XCTAssertEqual(try Signature("D@:D").argumentTypes[2], .longDouble)
        XCTAssertEqual(TypeEncoding.longDouble.keyCode, 18)
    }
}
