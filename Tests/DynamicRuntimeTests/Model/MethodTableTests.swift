import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

/// The compact method table behaves as a dictionary of selectors to methods would.
final class MethodTableTests: XCTestCase {
    func testAddRemoveAndLookUpManyMethods() throws {
        let cls = try RuntimeClass(name: "MTManyMethods")
        let sels = (0..<600).map { Selector("mt\($0)") }
        for (i, s) in sels.enumerated() { try cls.addMethod(s) { (_: ObjectRef) -> Int in i } }
        for (i, s) in sels.enumerated() where i % 3 == 0 { try cls.removeMethod(s) }
        let o = try cls.createInstance()
        for (i, s) in sels.enumerated() {
            if i % 3 == 0 {
                XCTAssertNil(cls.ownMethod(for: s), "\(s)")
                XCTAssertThrowsError(try o.send(s) as Int)
            } else {
                XCTAssertEqual(try o.send(s) as Int, i)
            }
        }
        XCTAssertEqual(cls.methodList.count, 400)
        for (i, s) in sels.enumerated() where i % 3 == 0 { try cls.addMethod(s) { (_: ObjectRef) -> Int in -i } }
        for (i, s) in sels.enumerated() { XCTAssertEqual(try o.send(s) as Int, i % 3 == 0 ? -i : i) }
        XCTAssertEqual(cls.methodList.count, 600)
    }

    func testAMethodsIMPAndOwnerStayTogetherAcrossReplacement() throws {
        let cls = try RuntimeClass(name: "MTReplace")
        try cls.addMethod("v") { (_: ObjectRef) -> Int in 1 }
        let first = try XCTUnwrap(cls.ownMethod(for: "v")?.implementation)
        XCTAssertTrue(first.isClosure)
        let previous = try cls.replaceMethod("v", implementation: IMP(unsafeBitCast(fwdPlainFunction, to: sf_imp.self)), types: "q@:")
        XCTAssertEqual(previous, first)
        XCTAssertTrue(previous?.isClosure ?? false, "the replaced closure comes back with its owner")
        let now = try XCTUnwrap(cls.ownMethod(for: "v")?.implementation)
        XCTAssertFalse(now.isClosure)
        XCTAssertEqual(try cls.createInstance().send("v") as Int, 42)
    }
}

private let fwdPlainFunction: @convention(c) (sf_id, sf_sel) -> Int = { _, _ in 42 }
