import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// An ivar is laid out in its object, never passed by value: objc4 and libobjc2 lay out an ivar
/// of any size, so the by-value argument limit belongs to method signatures only.
final class LargeIvarTests: XCTestCase {
    /// `{Big=d…d}` of `count` doubles.
    private func big(_ count: Int) -> String { "{Big=" + String(repeating: "d", count: count) + "}" }

    func testAnEightHundredKilobyteStructIvarFromC() throws {
        let name = uniqueClassName("BigIvarC")
        let cls = try XCTUnwrap(name.withCString { sf_allocateClassPair(nil, $0) })
        XCTAssertTrue(sf_class_addIvar(cls, "big", 800_000, 3, big(100_000)), String(cString: sf_last_error_message()))
        XCTAssertTrue(sf_class_addIvar(cls, "after", 8, 3, "q"))
        sf_registerClassPair(cls)
        let offset = sf_class_getIvarOffset(cls, "big")
        let after = sf_class_getIvarOffset(cls, "after")
        XCTAssertGreaterThanOrEqual(after, offset + 800_000)
        let obj = try XCTUnwrap(sf_class_createInstance(cls))
        defer { sf_release(obj) }
        let p = try XCTUnwrap(sf_object_getIvarPointer(obj, offset))
        p.storeBytes(of: 1.5, toByteOffset: 0, as: Double.self)
        p.storeBytes(of: 2.5, toByteOffset: 799_992, as: Double.self)
        sf_object_getIvarPointer(obj, after)!.storeBytes(of: 42, as: Int.self)
        XCTAssertEqual(p.load(fromByteOffset: 0, as: Double.self), 1.5)
        XCTAssertEqual(p.load(fromByteOffset: 799_992, as: Double.self), 2.5, "the last element is the object's")
        XCTAssertEqual(sf_object_getIvarPointer(obj, after)!.load(as: Int.self), 42)

        // The size is still checked against the type.
        let other = try XCTUnwrap(uniqueClassName("BigIvarWrong").withCString { sf_allocateClassPair(nil, $0) })
        XCTAssertFalse(sf_class_addIvar(other, "big", 8, 3, big(100_000)))
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        XCTAssertFalse(sf_class_addIvar(other, "two", 8, 3, "qq"), "exactly one type")
        XCTAssertEqual(sf_last_error(), SF_ERR_BAD_ENCODING)
    }

    func testALargeStructIvarFromSwift() throws {
        let type = TypeEncoding.structure(name: "Big", fields: Array(repeating: .double, count: 100_000))
        let cls = try RuntimeClass(name: uniqueClassName("BigIvarSwift"), ivars: [("big", type), ("tail", .int64)])
        do {
            let ivar = try XCTUnwrap(cls.ivar(named: "big"))
            XCTAssertEqual(ivar.size, 800_000)
            let o = try cls.createInstance()
            try o.setValue(7, forIvar: "tail")
            XCTAssertEqual(try o.value(ofIvar: "tail", as: Int.self), 7)
            XCTAssertGreaterThanOrEqual(try XCTUnwrap(cls.ivar(named: "tail")).offset, ivar.offset + 800_000)
        }
        // The class's ivar list holds the 100,000-field type: disposed, it goes (LeakSanitizer
        // cannot see through the enum's tagged payload pointers of a class kept for ever).
        try cls.dispose()
    }

    /// The limit stays where it belongs: a method may not take a 64 kB struct by value.
    func testASignatureStillRefusesAHugeStructByValue() throws {
        XCTAssertThrowsError(try Signature("v@:" + big(8_192))) { error in
            guard case .malformedEncoding? = error as? RuntimeError else { return XCTFail("\(error)") }
        }
        let cls = try RuntimeClass(name: uniqueClassName("BigIvarSig"))
        XCTAssertThrowsError(try cls.addMethod("take:", types: "v@:" + big(8_192)) { _, _ in })
    }
}
