import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class SignatureTests: XCTestCase {
    private func ffiArg(_ sig: Signature, _ i: Int) -> ffi_type { sig.raw.pointee.arg_types[i]!.pointee }

    // MARK: - Scalars

    /// Every scalar code parses to its TypeEncoding and the libffi type of the same size,
    /// both as an argument and as a return type.
    func testEveryScalarCodeParsesToItsLibffiType() throws {
        let table: [(String, TypeEncoding, Int, UInt16)] = [
            ("c", .int8, 1, UInt16(FFI_TYPE_SINT8)), ("C", .uint8, 1, UInt16(FFI_TYPE_UINT8)),
            ("s", .int16, 2, UInt16(FFI_TYPE_SINT16)), ("S", .uint16, 2, UInt16(FFI_TYPE_UINT16)),
            ("i", .int32, 4, UInt16(FFI_TYPE_SINT32)), ("I", .uint32, 4, UInt16(FFI_TYPE_UINT32)),
            ("l", .long, 8, UInt16(FFI_TYPE_SINT64)), ("L", .unsignedLong, 8, UInt16(FFI_TYPE_UINT64)),
            ("q", .int64, 8, UInt16(FFI_TYPE_SINT64)), ("Q", .uint64, 8, UInt16(FFI_TYPE_UINT64)),
            ("f", .float, 4, UInt16(FFI_TYPE_FLOAT)), ("d", .double, 8, UInt16(FFI_TYPE_DOUBLE)),
            ("B", .bool, 1, UInt16(FFI_TYPE_UINT8)),
            ("*", .cString, 8, UInt16(FFI_TYPE_POINTER)), ("@", .object, 8, UInt16(FFI_TYPE_POINTER)),
            ("#", .classObject, 8, UInt16(FFI_TYPE_POINTER)), (":", .selector, 8, UInt16(FFI_TYPE_POINTER)),
            ("^i", .pointer(.int32), 8, UInt16(FFI_TYPE_POINTER)), ("^v", .pointer(.void), 8, UInt16(FFI_TYPE_POINTER)),
            ("^?", .pointer(nil), 8, UInt16(FFI_TYPE_POINTER)),
        ]
        for (code, type, size, ffiCode) in table {
            let sig = try Signature("v@:" + code)
            XCTAssertEqual(sig.argumentTypes, [.object, .selector, type], code)
            XCTAssertEqual(sig.explicitArgumentCount, 1)
            XCTAssertEqual(Int(ffiArg(sig, 2).size), size, code)
            XCTAssertEqual(ffiArg(sig, 2).type, ffiCode, code)
            XCTAssertEqual(sig.raw.pointee.nargs, 3)

            let ret = try Signature(code + "@:")
            XCTAssertEqual(ret.returnType, type, code)
            XCTAssertEqual(ret.raw.pointee.return_type.pointee.type, ffiCode, code)
            XCTAssertEqual(type.encoding, code)
        }
        let void = try Signature("v@:")
        XCTAssertEqual(void.returnType, .void)
        XCTAssertEqual(void.raw.pointee.return_type.pointee.type, UInt16(FFI_TYPE_VOID))
        XCTAssertEqual(void.explicitArgumentCount, 0)
    }

    func testSignaturesAreInternedByCanonicalEncoding() throws {
        let a = try Signature("q@:qq")
        let b = try Signature("q24@0:8q16q20")
        let c = try Signature("rq@:nqOq")
        XCTAssertEqual(a, b)
        XCTAssertEqual(a, c)
        XCTAssertEqual(a.raw, b.raw, "one C signature per canonical encoding")
        XCTAssertEqual(b.encoding, "q@:qq")
        XCTAssertEqual(String(cString: a.raw.pointee.types), "q@:qq")
        XCTAssertNotEqual(try Signature("q@:qi"), a)
    }

    func testOffsetsAndQualifiersAreAccepted() throws {
        XCTAssertEqual(try Signature("q24@0:8q16").encoding, "q@:q")
        XCTAssertEqual(try Signature("v-8@0:8").encoding, "v@:")
        XCTAssertEqual(try Signature("Vv16@0:8").encoding, "v@:")
        XCTAssertEqual(try Signature("v@:r*nIoONRr^v").encoding, "v@:*I^v")
        XCTAssertEqual(try Signature("@\"Foo\"@:@\"NSString\"#").encoding, "@@:@#")
        XCTAssertEqual(try Signature("#@:").returnType, .classObject)
        XCTAssertEqual(try Signature("v#:").argumentTypes.first, .classObject, "a class method's receiver may be '#'")
    }

    // MARK: - Structs

    func testStructsParseIntoLibffiStructs() throws {
        let sig = try Signature("{Point=dd}@:{Point=dd}d")
        XCTAssertEqual(sig.returnType, Point.typeEncoding)
        let t = ffiArg(sig, 2)
        XCTAssertEqual(t.type, UInt16(FFI_TYPE_STRUCT))
        XCTAssertEqual(t.size, 16)
        XCTAssertEqual(t.alignment, 8)
        XCTAssertEqual(t.elements[0]!.pointee.type, UInt16(FFI_TYPE_DOUBLE))
        XCTAssertEqual(t.elements[1]!.pointee.type, UInt16(FFI_TYPE_DOUBLE))
        XCTAssertNil(t.elements[2], "libffi's element list is NULL-terminated")
        XCTAssertEqual(sig.raw.pointee.return_type.pointee.size, 16)
    }

    func testNestedStructsAndPadding() throws {
        let rect = try Signature("v@:{Rect={Point=dd}{Size=dd}}")
        XCTAssertEqual(ffiArg(rect, 2).size, 32)
        XCTAssertEqual(ffiArg(rect, 2).elements[0]!.pointee.type, UInt16(FFI_TYPE_STRUCT))
        guard case let .structure(name, fields) = rect.argumentTypes[2] else { return XCTFail("not a struct") }
        XCTAssertEqual(name, "Rect")
        XCTAssertEqual(fields.count, 2)

        let padded = try Signature("v@:{Mixed=cid}")
        XCTAssertEqual(ffiArg(padded, 2).size, 16, "c at 0, i at 4, d at 8")
        XCTAssertEqual(ffiArg(padded, 2).alignment, 8)
        let deep = try Signature("v@:{A={B={C={D=c}}}}")
        XCTAssertEqual(ffiArg(deep, 2).size, 1)
        let anonymous = try Signature("v@:{?=ii}")
        XCTAssertEqual(ffiArg(anonymous, 2).size, 8)
        let namedFields = try Signature("v@:{P=\"x\"d\"y\"d}")
        XCTAssertEqual(namedFields.argumentTypes[2], .structure(name: "P", fields: [.double, .double]))
    }

    func testStructNamesAreDocumentationLayoutsMustAgree() {
        XCTAssertTrue(TypeEncoding.structure(name: "A", fields: [.double, .double])
            .isCompatible(with: .structure(name: "B", fields: [.double, .double])))
        XCTAssertFalse(TypeEncoding.structure(name: "A", fields: [.double, .double])
            .isCompatible(with: .structure(name: "A", fields: [.double, .float])))
        XCTAssertTrue(TypeEncoding.long.isCompatible(with: .int64))
        XCTAssertFalse(TypeEncoding.int32.isCompatible(with: .int64))
    }

    /// A pointer to an opaque struct (`^{Name=}`, what compilers emit for incomplete types)
    /// is a plain pointer: only a struct passed by value needs its fields.
    func testPointerToOpaqueStructIsAccepted() throws {
        XCTAssertEqual(try Signature("v@:^{Opaque=}").argumentTypes[2].encoding, "^{Opaque=}")
        XCTAssertEqual(ffiArg(try Signature("v@:^{Opaque}"), 2).type, UInt16(FFI_TYPE_POINTER))
        XCTAssertEqual(try Signature("^{__sFILE=}@:").returnType.encoding, "^{__sFILE=}")
    }

    // MARK: - Bad input

    private func assertMalformed(_ text: String, offset: Int, character: String?, _ reasonPart: String = "",
                                 file: StaticString = #filePath, line: UInt = #line) {
        do {
            let sig = try Signature(text)
            XCTFail("\"\(text)\" parsed as \(sig)", file: file, line: line)
        } catch let .malformedEncoding(context) {
            let (encoding, at, reason) = (context.actual, context.offset, context.reason ?? "")
            XCTAssertEqual(encoding, text, file: file, line: line)
            XCTAssertEqual(at, offset, "offset for \"\(text)\": \(reason)", file: file, line: line)
            if let character {
                XCTAssertTrue(reason.contains("character '\(character)'"), "\"\(text)\": \(reason)", file: file, line: line)
            } else {
                XCTAssertTrue(reason.contains("end of encoding"), "\"\(text)\": \(reason)", file: file, line: line)
            }
            if !reasonPart.isEmpty {
                XCTAssertTrue(reason.contains(reasonPart), "\"\(text)\": \(reason)", file: file, line: line)
            }
            let description = RuntimeError.malformedEncoding(.init(actual: encoding, offset: at, reason: reason)).description
            XCTAssertTrue(description.contains("offset \(offset)"), description, file: file, line: line)
            XCTAssertTrue(text.isEmpty || description.contains(text), description, file: file, line: line)
        } catch {
            XCTFail("\"\(text)\": unexpected \(error)", file: file, line: line)
        }
    }

    func testMalformedEncodingsNameOffsetAndCharacter() {
        assertMalformed("", offset: 0, character: nil, "empty")
        assertMalformed("q", offset: 1, character: nil, "receiver")
        assertMalformed("q@", offset: 2, character: nil, "selector")
        assertMalformed("qq:", offset: 1, character: "q", "receiver")
        assertMalformed("q@q", offset: 2, character: "q", "selector")
        assertMalformed("v:@", offset: 1, character: ":", "receiver")
        assertMalformed("{Point}", offset: 0, character: "{", "no fields")
        assertMalformed("v@:{Point}", offset: 3, character: "{", "no fields")
        assertMalformed("{P=dd", offset: 0, character: "{", "unterminated")
        assertMalformed("v@:{P=dd", offset: 3, character: "{", "unterminated")
        assertMalformed("{P", offset: 0, character: "{", "unterminated")
        assertMalformed("[4i]@:", offset: 0, character: "[", "cannot be returned")
        assertMalformed("v@:[16", offset: 3, character: "[", "element type")
        assertMalformed("v@:[x@]", offset: 4, character: "x", "element count")
        assertMalformed("v@:[4iq]", offset: 6, character: "q", "unterminated array")
        assertMalformed("(u=i)", offset: 0, character: "(", "unions")
        assertMalformed("b3", offset: 0, character: "b", "bit field")
        assertMalformed("v@:{S=b3}", offset: 6, character: "b", "bit field")
        assertMalformed("@?", offset: 2, character: nil, "receiver")
        assertMalformed("x@:", offset: 0, character: "x", "unknown")
        assertMalformed("v@:x", offset: 3, character: "x", "unknown")
        assertMalformed("^", offset: 0, character: "^", "pointee")
        assertMalformed("v@:^", offset: 3, character: "^", "pointee")
        assertMalformed("v@:v", offset: 3, character: "v", "void")
        assertMalformed("v@:{S=v}", offset: 6, character: "v", "void")
        assertMalformed("?@:", offset: 0, character: "?", "unknown")
        assertMalformed("v@:@\"Unterminated", offset: 3, character: "@", "unterminated")
        assertMalformed("v@:{P=\"x", offset: 3, character: "{", "unterminated")
        assertMalformed("v@:{A{B=i}=i}", offset: 5, character: "{", "'{' inside")
        assertMalformed("v@:}", offset: 3, character: "}", "unknown")
        assertMalformed("v@:q24x", offset: 6, character: "x")
    }

    func testOnlyQualifiersOrOffsetsIsMalformed() {
        assertMalformed("r", offset: 1, character: nil, "expected a type")
        assertMalformed("24", offset: 0, character: "2")
        assertMalformed("v@:r", offset: 4, character: nil, "expected a type")
    }

    func testNestingAndArgumentLimits() throws {
        let deep = String(repeating: "^", count: 40) + "i"
        assertMalformed("v@:" + deep, offset: 35, character: "^", "nested")
        _ = try Signature("v@:" + String(repeating: "q", count: 62))
        assertMalformed("v@:" + String(repeating: "q", count: 63), offset: 66, character: nil, "64 arguments")
    }

    func testMalformedEncodingMapsToTheCErrorCode() {
        let error = RuntimeError.malformedEncoding(.init(actual: "x", offset: 0, reason: "r"))
        XCTAssertEqual(error.code, SF_ERR_BAD_ENCODING)
    }

    func testMangledInputsNeverCrash() {
        // Every prefix of a valid encoding either parses or throws malformedEncoding.
        let valid = "{Rect={Point=dd}{Size=dd}}24@0:8^{Opaque=}16r*24@\"X\"32"
        for end in valid.indices {
            let prefix = String(valid[..<end])
            do { _ = try Signature(prefix) } catch let error {
                guard case .malformedEncoding = error else { return XCTFail("\(prefix): \(error)") }
            }
        }
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("vcCsSiIlLqQfdB*@#:^{}=[]()\"?b0123456789rnNoORVx")
        for _ in 0..<2000 {
            let n = Int.random(in: 0...12, using: &generator)
            let text = String((0..<n).map { _ in alphabet.randomElement(using: &generator)! })
            do { _ = try Signature(text) } catch let error {
                guard case .malformedEncoding = error else { return XCTFail("\(text): \(error)") }
            }
        }
    }
}
