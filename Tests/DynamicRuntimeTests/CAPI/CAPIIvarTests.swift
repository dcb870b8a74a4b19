import TestSupport
import CDynamicRuntime
import Dispatch
import Synchronization
import XCTest
@testable import DynamicRuntime

/// class_getInstanceVariable and the ivar_ getters from the C API (objc4 test/ivar.m has the
/// C side, in the conformance scenarios).
final class CAPIIvarTests: XCTestCase {
    private func name(_ h: sf_ivar_t?) -> String? { sf_ivar_getName(h).map { String(cString: $0) } }
    private func type(_ h: sf_ivar_t?) -> String? { sf_ivar_getTypeEncoding(h).map { String(cString: $0) } }

    func testHandlesDescribeTheSwiftIvars() throws {
        let cls = try RuntimeClass.allocate(name: uniqueClassName("IvarHandles"))
        try cls.addIvar("count", type: .int64)
        try cls.addIvar("pair", type: .structure(name: "Pair", fields: [.double, .double]))
        try cls.addWeakIvar("delegate")
        cls.register()
        for ivar in cls.ivars {
            let h = try XCTUnwrap(sf_class_getInstanceVariable(cls.raw, ivar.name))
            XCTAssertEqual(name(h), ivar.name)
            XCTAssertEqual(type(h), ivar.type.encoding)
            XCTAssertEqual(sf_ivar_getOffset(h), ivar.offset)
        }
        XCTAssertEqual(type(sf_class_getInstanceVariable(cls.raw, "pair")), "{Pair=dd}")
        XCTAssertEqual(type(sf_class_getInstanceVariable(cls.raw, "delegate")), "@", "a weak ivar is an object ivar")
    }

    func testAMissingNameIsNullWithAnErrorNamingClassAndIvar() throws {
        let base = try RuntimeClass(name: uniqueClassName("IvarBase"), ivars: [("shared", .int32)])
        let sub = try RuntimeClass(name: uniqueClassName("IvarSub"), superclass: base, ivars: [("own", .object)])
        XCTAssertEqual(sf_class_getInstanceVariable(sub.raw, "shared"), sf_class_getInstanceVariable(base.raw, "shared"))
        XCTAssertNil(sf_class_getInstanceVariable(base.raw, "own"))
        XCTAssertEqual(sf_last_error(), SF_ERR_INVALID_ARGUMENT)
        let message = String(cString: sf_last_error_message())
        XCTAssertTrue(message.contains("ivar 'own' of '\(base.name)'"), message)
        XCTAssertNil(sf_class_getInstanceVariable(sub.metaclass.raw, "own"))
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("metaclass"), String(cString: sf_last_error_message()))
        XCTAssertNotNil(sf_class_getInstanceVariable(sub.raw, "own"))
        XCTAssertEqual(sf_last_error(), SF_OK, "a successful lookup resets the last error")
    }

    func testADuplicatedClassHasHandlesOfItsOwnAtTheSameOffsets() throws {
        let original = try RuntimeClass(name: uniqueClassName("IvarOriginal"), ivars: [("value", .int64)])
        let copy = try original.duplicate(named: uniqueClassName("IvarCopy"))
        let a = try XCTUnwrap(sf_class_getInstanceVariable(original.raw, "value"))
        let b = try XCTUnwrap(sf_class_getInstanceVariable(copy.raw, "value"))
        XCTAssertNotEqual(a, b)
        XCTAssertEqual(sf_ivar_getOffset(a), sf_ivar_getOffset(b))
        try copy.dispose()
        XCTAssertEqual(name(a), "value", "the original's handle lives with the original")
    }

    func testConcurrentLookupsShareOneHandle() throws {
        let cls = try RuntimeClass(name: uniqueClassName("IvarRace"), ivars: (0..<8).map { ("v\($0)", .int64) })
        let seen = Mutex<[String: Set<UInt>]>([:])
        DispatchQueue.concurrentPerform(iterations: 64) { i in
            let ivar = "v\(i % 8)"
            let h = sf_class_getInstanceVariable(cls.raw, ivar)
            let bits = UInt(bitPattern: h.map { UnsafeRawPointer($0) })
            seen.withLock { _ = $0[ivar, default: []].insert(bits) }
        }
        let handles = seen.withLock { $0 }
        XCTAssertEqual(handles.count, 8)
        XCTAssertTrue(handles.values.allSatisfy { $0.count == 1 && !$0.contains(0) }, "\(handles)")
    }
}
