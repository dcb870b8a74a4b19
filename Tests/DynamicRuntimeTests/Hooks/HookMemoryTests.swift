// Hooking and unhooking many times frees everything it made.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class HookMemoryTests: XCTestCase {
    struct Baseline {
        let closures: Int
        let objects: Int
        let heap: Int?
        let rss: Int
    }

    func measure() -> Baseline {
        fwdCollect()
        return Baseline(closures: Runtime.liveClosureCount, objects: Runtime.liveObjectCount,
                        heap: fwdLiveHeapBytes(), rss: residentBytes())
    }

    /// Live runtime objects and closures are back to the baseline, nothing awaits a grace
    /// period, and memory did not grow: RSS by less than `allowedRSSGrowth`, or, under
    /// AddressSanitizer, where RSS is meaningless (quarantine, shadow memory; see
    /// `fwdLiveHeapBytes`), the live heap by less than `allowedHeapGrowth`.
    func assertBackTo(_ b: Baseline, allowedRSSGrowth: Int, allowedHeapGrowth: Int = 256 << 10,
                      file: StaticString = #filePath, line: UInt = #line) {
        fwdCollect()
        XCTAssertEqual(Runtime.liveClosureCount, b.closures, "trampolines and hook closures freed", file: file, line: line)
        XCTAssertEqual(Runtime.liveObjectCount, b.objects, file: file, line: line)
        XCTAssertEqual(Runtime.state.retiredCount, 0, "nothing left waiting for a grace period", file: file, line: line)
        if let before = b.heap, let now = fwdLiveHeapBytes() {
            let growth = now - before
            XCTAssertLessThan(growth, allowedHeapGrowth, "live heap grew by \(growth) bytes", file: file, line: line)
        } else {
            let growth = residentBytes() - b.rss
            XCTAssertLessThan(growth, allowedRSSGrowth, "RSS grew by \(growth) bytes", file: file, line: line)
        }
    }

    func testHookAndUnhook100kTimesDoesNotGrow() throws {
        let cls = try makeClass("HookChurn")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let original = cls.ownMethod(for: "add:to:")!.implementation
        let o = try cls.createInstance()
        let positions: [HookPosition] = [.before, .instead, .after]
        // Warm up allocator pools and libffi's trampoline pages.
        for i in 0..<3000 { try cls.hook("add:to:", positions[i % 3]) { _ in }.remove() }
        let baseline = measure()
        var hookedResults = 0
        for i in 0..<100_000 {
            let token = try cls.hook("add:to:", positions[i % 3]) { ctx in
                if ctx.selector.name.isEmpty { XCTFail("unreachable") }
                if i % 3 == 1 { try ctx.proceed() }
            }
            if i % 5000 == 0 {
                hookedResults += try o.send("add:to:", 1, 2) as Int == 3 ? 1 : 0
                XCTAssertNotEqual(cls.ownMethod(for: "add:to:")!.implementation, original)
            }
            XCTAssertTrue(token.remove())
        }
        XCTAssertEqual(hookedResults, 20)
        XCTAssertEqual(cls.ownMethod(for: "add:to:")!.implementation, original)
        assertBackTo(baseline, allowedRSSGrowth: 8 << 20)
    }

    func testStackedHooksAddedAndRemovedDoNotGrow() throws {
        let cls = try makeClass("HookChurnStacked")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let o = try cls.createInstance()
        for _ in 0..<200 { try cls.hook("add:to:", .after) { _ in }.remove() }
        let baseline = measure()
        for round in 0..<2000 {
            var tokens: [HookToken] = []
            for k in 0..<5 {
                tokens.append(try cls.hook("add:to:", [HookPosition.before, .instead, .after][k % 3]) { ctx in
                    if k % 3 == 1 { try ctx.proceed() }
                })
            }
            if round % 500 == 0 { XCTAssertEqual(try o.send("add:to:", 2, 2) as Int, 4) }
            for t in tokens.shuffled() { t.remove() }
        }
        assertBackTo(baseline, allowedRSSGrowth: 8 << 20)
    }

    func testInheritedAndClassMethodHookChurnDoesNotGrow() throws {
        let base = try makeClass("HookChurnBase")
        try base.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        try base.metaclass.addMethod("version") { (_: ObjectRef) -> Int in 1 }
        let sub = try makeClass("HookChurnSub", superclass: base)
        let s = try sub.createInstance()
        for _ in 0..<200 {
            try sub.hook("add:to:", .before) { _ in }.remove()
            try sub.hookClassMethod("version", .before) { _ in }.remove()
        }
        let baseline = measure()
        for i in 0..<20_000 {
            let t1 = try sub.hook("add:to:", .before) { _ in }
            let t2 = try sub.hookClassMethod("version", .after) { _ in }
            if i % 2000 == 0 {
                XCTAssertEqual(try s.send("add:to:", 1, 1) as Int, 2)
                XCTAssertEqual(try sub.send("version") as Int, 1)
            }
            t1.remove()
            t2.remove()
        }
        XCTAssertNil(sub.ownMethod(for: "add:to:"))
        XCTAssertNil(sub.metaclass.ownMethod(for: "version"))
        assertBackTo(baseline, allowedRSSGrowth: 8 << 20)
    }

    func testPerInstanceHookChurnDoesNotGrow() throws {
        let cls = try makeClass("HookChurnInstance")
        try cls.addMethod("add:to:") { (_: ObjectRef, a: Int, b: Int) in a + b }
        let o = try cls.createInstance()
        try o.hook("add:to:", .before) { _ in }.remove()
        for _ in 0..<200 { try o.hook("add:to:", .before) { _ in }.remove() }
        let baseline = measure()
        for i in 0..<20_000 {
            let t = try o.hook("add:to:", .after) { _ in }
            if i % 2000 == 0 { XCTAssertEqual(try o.send("add:to:", 1, 1) as Int, 2) }
            t.remove()
        }
        assertBackTo(baseline, allowedRSSGrowth: 8 << 20)

        // Short-lived hooked objects: each one's private class goes with it.
        let baseline2 = measure()
        for i in 0..<3000 {
            let x = try cls.createInstance()
            let t = try x.hook("add:to:", .before) { _ in }
            if i % 2 == 0 { t.remove() }
            XCTAssertEqual(try x.send("add:to:", 1, 1) as Int, 2)
        }
        assertBackTo(baseline2, allowedRSSGrowth: 8 << 20)
    }
}
