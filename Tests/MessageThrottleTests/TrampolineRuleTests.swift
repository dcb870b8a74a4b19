// Issue 12: rules intercept calls through trampoline slots, and no page of the process is ever
// writable and executable at once while rules are applied, called and discarded.
import TestSupport
import Foundation
import XCTest
@testable import MessageThrottle

final class TrampolineRuleTests: XCTestCase {
    private func writableExecutable() -> [String] {
        // Read to the end with stdio: the file reports no size.
        guard let f = fopen("/proc/self/maps", "r") else { return ["unreadable"] }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while case let n = fread(&chunk, 1, chunk.count, f), n > 0 { bytes += chunk[0..<n] }
        let text = String(decoding: bytes, as: UTF8.self)
        XCTAssertTrue(text.contains("[stack]"), "read the whole file")
        return text.split(separator: "\n").map(String.init).filter { line in
            let perms = line.split(separator: " ").dropFirst().first ?? ""
            return perms.contains("w") && perms.contains("x")
        }
    }

    func testRulesLeaveNoWritableExecutableMapping() throws {
        XCTAssertEqual(writableExecutable(), [], "before")
        let clock = ManualClock()
        let engine = Engine(executor: ManualExecutor(clock: clock))
        let cls = try RuntimeClass(name: "TrampRuleWX", ivars: [("sum", .int64)])
        try cls.addMethod("add:") { (self_: ObjectRef, n: Int) -> Int in
            let s = try self_.value(ofIvar: "sum", as: Int.self) + n
            try self_.setValue(s, forIvar: "sum")
            return s
        }
        try cls.addMethod("scale:by:") { (_: ObjectRef, x: Double, k: Double) -> Double in x * k }
        let o = try cls.createInstance()
        var rules: [Rule] = []
        for mode in [ThrottleMode.firstly, .last, .debounce] {
            let rule = try o.limit("add:", oncePer: .milliseconds(100), mode: mode, in: engine)
            _ = try o.send("add:", 1, as: Int.self)
            XCTAssertEqual(writableExecutable(), [], "with a \(mode) rule")
            clock.advance(by: .milliseconds(200))
            XCTAssertTrue(engine.discard(rule))
        }
        rules.append(try cls.limit("scale:by:", oncePer: .milliseconds(0), mode: .firstly, in: engine))
        XCTAssertEqual(try o.send("scale:by:", 1.5, 2.0, as: Double.self), 3)
        XCTAssertEqual(writableExecutable(), [], "with a class rule over a double signature")
        rules.forEach { XCTAssertTrue(engine.discard($0)) }
        XCTAssertEqual(try o.value(ofIvar: "sum", as: Int.self), 3)
        XCTAssertEqual(writableExecutable(), [], "after discarding")
    }
}
