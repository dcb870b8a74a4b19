// Rules intercept calls through trampoline slots, and no page of the process is ever
// writable and executable at once while closure methods, hooks and rules are made, called and
// discarded — including the signatures that keep libffi's closure (long double).
import TestSupport
import Foundation
import XCTest
@testable import MessageThrottle

final class TrampolineRuleTests: XCTestCase {
    func testClosuresHooksAndRulesLeaveNoWritableExecutableMapping() throws {
        XCTAssertEqual(writableExecutableMappings(), [], "before")
        let watcher = MappingWatcher()
        let clock = ManualClock()
        let engine = Engine(executor: ManualExecutor(clock: clock))
        let cls = try RuntimeClass(name: uniqueClassName("TrampRuleWX"), ivars: [("sum", .int64)])
        try cls.addMethod("add:") { (self_: ObjectRef, n: Int) -> Int in
            let s = try self_.value(ofIvar: "sum", as: Int.self) + n
            try self_.setValue(s, forIvar: "sum")
            return s
        }
        try cls.addMethod("scale:by:") { (_: ObjectRef, x: Double, k: Double) -> Double in x * k }
        try cls.addMethod("precise:") { (_: ObjectRef, x: Float80) -> Float80 in x * 2 }
        let o = try cls.createInstance()
        var rules: [Rule] = []
        for mode in [ThrottleMode.firstly, .last, .debounce] {
            let rule = try o.limit("add:", oncePer: .milliseconds(100), mode: mode, in: engine)
            _ = try o.send("add:", 1, as: Int.self)
            XCTAssertEqual(writableExecutableMappings(), [], "with a \(mode) rule")
            clock.advance(by: .milliseconds(200))
            XCTAssertTrue(engine.discard(rule))
        }
        rules.append(try cls.limit("scale:by:", oncePer: .milliseconds(0), mode: .firstly, in: engine))
        XCTAssertEqual(try o.send("scale:by:", 1.5, 2.0, as: Double.self), 3)
        XCTAssertEqual(writableExecutableMappings(), [], "with a class rule over a double signature")
        // A hook under a rule, and a rule over a long double method (libffi's closure).
        let hook = try cls.hook("scale:by:", .after) { ctx in try ctx.setReturnValue(try ctx.returnValue(as: Double.self) + 1) }
        XCTAssertEqual(try o.send("scale:by:", 1.5, 2.0, as: Double.self), 4)
        rules.append(try cls.limit("precise:", oncePer: .milliseconds(0), mode: .firstly, in: engine))
        XCTAssertEqual(try o.send("precise:", Float80(1.25), as: Float80.self), 2.5)
        XCTAssertEqual(writableExecutableMappings(), [], "with hooks and a long double rule")
        XCTAssertTrue(hook.remove())
        rules.forEach { XCTAssertTrue(engine.discard($0)) }
        XCTAssertEqual(try o.value(ofIvar: "sum", as: Int.self), 3)

        let seen = watcher.stop()
        XCTAssertEqual(seen.found, [], "a mapping was writable and executable at some point")
        XCTAssertGreaterThan(seen.reads, 1)
        XCTAssertEqual(writableExecutableMappings(), [], "after discarding")
    }
}
