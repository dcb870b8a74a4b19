import TestSupport
import XCTest
import Dispatch
import Foundation
import CDynamicRuntime
@testable import DynamicRuntime
@testable import MessageThrottle

/// Fresh class names and a calculator for the bad-input tests (docs/reliability.md, "Bad
/// inputs"), which are split over BadInputTests and BadUseTests.
class BadInputTestCase: XCTestCase {
    nonisolated(unsafe) static var serial = 0
    /// A fresh class name per test (class names are process-wide).
    func name(_ base: String) -> String {
        BadInputTestCase.serial += 1
        return "Bad.\(base).\(BadInputTestCase.serial)"
    }

    func calculator() throws -> (RuntimeClass, Object) {
        let cls = try RuntimeClass(name: name("Calc"))
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        return (cls, try cls.createInstance())
    }

    func encodingError(_ text: String) -> RuntimeError? {
        do {
            _ = try Signature(text)
            return nil
        } catch {
            return error
        }
    }
}
