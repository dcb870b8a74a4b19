import TestSupport
import XCTest
@testable import MessageThrottle

final class EngineSmokeTests: XCTestCase {
    func testModesThroughHooks() throws {
        let clock = ManualClock()
        let exec = ManualExecutor(clock: clock)
        let engine = Engine(executor: exec)
        let cls = try RuntimeClass(name: "ESCounter", ivars: [("sum", .int64)])
        try cls.addMethod("add:") { (self_: ObjectRef, n: Int) -> Int in
            let s = try self_.value(ofIvar: "sum", as: Int.self) + n
            try self_.setValue(s, forIvar: "sum")
            return s
        }
        let a = try cls.createInstance()
        let b = try cls.createInstance()
        let rule = try a.limit("add:", oncePer: .milliseconds(100), mode: .last, in: engine)
        for i in 1...5 { XCTAssertEqual(try a.send("add:", i, as: Int.self), 0) }
        XCTAssertEqual(try b.send("add:", 7, as: Int.self), 7)
        XCTAssertEqual(try a.value(ofIvar: "sum", as: Int.self), 0)
        clock.advance(by: .milliseconds(100))
        XCTAssertEqual(try a.value(ofIvar: "sum", as: Int.self), 5)

        // Class rule + instance rule: the instance rule wins for a.
        let classRule = try cls.limit("add:", oncePer: .milliseconds(50), mode: .firstly, in: engine)
        XCTAssertEqual(try b.send("add:", 1, as: Int.self), 8)
        XCTAssertEqual(try b.send("add:", 1, as: Int.self), 0)
        _ = try a.send("add:", 10, as: Int.self)
        clock.advance(by: .milliseconds(100))
        XCTAssertEqual(try a.value(ofIvar: "sum", as: Int.self), 15)

        let sub = try RuntimeClass(name: "ESSubCounter", superclass: cls)
        XCTAssertThrowsError(try sub.limit("add:", oncePer: .seconds(1), in: engine)) { e in
            guard case .conflictingRule? = e as? ThrottleError else { return XCTFail("\(e)") }
        }
        XCTAssertTrue(engine.discard(rule))
        XCTAssertTrue(engine.discard(classRule))
        XCTAssertFalse(engine.discard(classRule))
        XCTAssertEqual(try a.send("add:", 1, as: Int.self), 16)
    }
}
