import TestSupport
import CDynamicRuntime
import Synchronization
import XCTest
@testable import DynamicRuntime

private let cOne: @convention(c) (sf_id?, sf_sel?) -> Int = { _, _ in 1 }
private let cTwo: @convention(c) (sf_id?, sf_sel?) -> Int = { _, _ in 2 }

/// class_addMethodsBulk / class_replaceMethodsBulk from the C API with what Swift adds on top:
/// hooks, closure IMPs (objc4 test/addMethods.mm has the C side).
final class CAPIBulkMethodTests: XCTestCase {
    func testABulkReplaceKeepsAHookAroundTheNewIMP() throws {
        let cls = try RuntimeClass(name: uniqueClassName("BulkHooked"))
        try cls.addMethod("value", implementation: imp(cOne), types: "q@:")
        let runs = Atomic<Int>(0)
        let token = try cls.hook("value", .before) { _ in runs.add(1, ordering: .relaxed) }
        let obj = try cls.createInstance()
        XCTAssertEqual(try obj.send("value") as Int, 1)
        var names: [sf_sel?] = [Selector("value").raw, Selector("fresh").raw]
        var imps: [sf_imp?] = [imp(cTwo).pointer, imp(cTwo).pointer]
        let status = "q@:".withCString { t in
            var types: [UnsafePointer<CChar>?] = [t, t]
            return sf_class_replaceMethodsBulk(cls.raw, &names, &imps, &types, 2)
        }
        XCTAssertEqual(status, SF_OK)
        XCTAssertEqual(try obj.send("value") as Int, 2, "the hook wraps the replacement")
        XCTAssertEqual(try obj.send("fresh") as Int, 2)
        XCTAssertEqual(runs.load(ordering: .relaxed), 2)
        token.remove()
        XCTAssertEqual(try obj.send("value") as Int, 2, "unhooking leaves the replacement")
    }

    func testAnUnboundIMPOfOtherTypesRefusesTheWholeList() throws {
        // An IMP made for "d@:" calls, bound to no class: it cannot serve "q@:".
        let closureIMP = try XCTUnwrap(sf_imp_implementationWithFunction("d@:", { _, _ in SF_OK }, nil, nil))
        defer { sf_imp_removeFunction(closureIMP) }
        let cls = try RuntimeClass(name: uniqueClassName("BulkTarget"))
        var names: [sf_sel?] = [Selector("first").raw, Selector("second").raw]
        var imps: [sf_imp?] = [imp(cOne).pointer, closureIMP]
        var failed: [sf_sel?] = [nil, nil]
        var failures: UInt32 = 9
        let status = "q@:".withCString { t in
            var types: [UnsafePointer<CChar>?] = [t, t]
            return sf_class_addMethodsBulk(cls.raw, &names, &imps, &types, 2, &failed, &failures)
        }
        XCTAssertEqual(status, SF_ERR_SIGNATURE_MISMATCH)
        XCTAssertEqual(failures, 0)
        XCTAssertTrue(String(cString: sf_last_error_message()).contains("second"), String(cString: sf_last_error_message()))
        XCTAssertNil(cls.ownMethod(for: "first"), "nothing of a refused list is installed")
    }

    func testExistingNamesAreReportedWithTheStatusAndTheRestAdded() throws {
        let cls = try RuntimeClass(name: uniqueClassName("BulkReport"))
        try cls.addMethod("kept", implementation: imp(cOne), types: "q@:")
        var names: [sf_sel?] = [Selector("kept").raw, Selector("added").raw]
        var imps: [sf_imp?] = [imp(cTwo).pointer, imp(cTwo).pointer]
        var failures: UInt32 = 0
        let status = "q@:".withCString { t in
            var types: [UnsafePointer<CChar>?] = [t, t]
            return sf_class_addMethodsBulk(cls.raw, &names, &imps, &types, 2, nil, &failures)
        }
        XCTAssertEqual(status, SF_ERR_METHOD_EXISTS)
        XCTAssertEqual(failures, 1)
        let message = String(cString: sf_last_error_message())
        XCTAssertTrue(message.contains("-[\(cls.name) kept] already exists") && message.contains("1 of 2"), message)
        let obj = try cls.createInstance()
        XCTAssertEqual(try obj.send("kept") as Int, 1)
        XCTAssertEqual(try obj.send("added") as Int, 2)
    }
}
