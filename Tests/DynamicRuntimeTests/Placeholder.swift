import XCTest
import DynamicRuntime

final class SmokeTests: XCTestCase {
    func testAddAndSend() throws {
        let cls = try RuntimeClass(name: "SmokeCalc")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let obj = try cls.createInstance()
        let r: Int = try obj.send("add:to:", 40, 2)
        XCTAssertEqual(r, 42)
        let d = try obj.send("add:to:", 1, 2)
        XCTAssertEqual(d.intValue, 3)
        XCTAssertThrowsError(try obj.send("nope")) { e in
            XCTAssertEqual(e as? RuntimeError, .doesNotRecognizeSelector(className: "SmokeCalc", selector: "nope", isClassMethod: false))
        }
        let old = try cls.replaceMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a * b }
        XCTAssertNotNil(old)
        let r2: Int = try obj.send("add:to:", 40, 2)
        XCTAssertEqual(r2, 80)
        let dbl: Double = try { try cls.addMethod("half:") { (_: ObjectRef, a: Double) in a / 2 }; return try obj.send("half:", 5.0) }()
        XCTAssertEqual(dbl, 2.5)
    }
}
