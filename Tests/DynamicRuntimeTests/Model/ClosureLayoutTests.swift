// The `Int` bodies' C thunks call a Swift closure from the two words stored in its box, a
// layout Swift does not promise: the runtime checks it once and falls back to the word body
// where it does not hold. These tests fail on a toolchain where it does not.
import TestSupport
import CDynamicRuntime
import XCTest
@testable import DynamicRuntime

final class ClosureLayoutTests: XCTestCase {
    func testTheClosureLayoutTheIntThunksReadHolds() {
        XCTAssertTrue(IntBodyLayout.holds, "a closure box's words are no longer (function, context)")
    }

    func testIntClosuresTakeTheDirectPathWhereTheLayoutHolds() throws {
        let enabled = sf_tramp_enabled()
        sf_tramp_set_enabled(1)
        defer { sf_tramp_set_enabled(enabled) }
        let cls = try makeClass("ClosureLayout")
        let offset = Int.random(in: 1...100)
        try cls.addMethod("mix:with:") { (_: ObjectRef, a: Int, b: Int) -> Int in a &* 3 &+ b &+ offset }
        let record = try XCTUnwrap(cls.method(for: "mix:with:"))
        let box = try XCTUnwrap(cls.ownMethod(for: "mix:with:")?.implementation.owner as? ClosureIMP)
        XCTAssertEqual(box.hasDirectIntBody, IntBodyLayout.holds)
        let o = try cls.createInstance()
        let typed: Int = try o.send("mix:with:", 4, 5)
        XCTAssertEqual(typed, 17 + offset)
        typealias Mix = @convention(c) (sf_id?, sf_sel?, Int, Int) -> Int
        let fromC = unsafeBitCast(record.implementation.pointer, to: Mix.self)(o.raw, Selector("mix:with:").raw, 4, 5)
        XCTAssertEqual(fromC, 17 + offset)
    }
}
