import TestSupport
import MessageThrottle
import XCTest

final class LastTests: XCTestCase {
    func testSingleCallIsPerformedAtTheEndOfItsWindow() {
        let h = Harness(.last, .milliseconds(100))
        XCTAssertEqual(h.send(1, at: 0), .deferred)
        h.advance(to: 99)
        XCTAssertEqual(h.fires, [])
        h.advance(to: 100)
        XCTAssertEqual(h.fires, [held(1, 100)])
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [held(1, 100)])
    }

    func testBurstPerformsTheLastMessageOfEachWindow() {
        let h = Harness(.last, .milliseconds(100))
        for ms in [0, 30, 60, 90] { XCTAssertEqual(h.send(ms, at: ms), .deferred) }
        XCTAssertEqual(h.limiter.pending?.id, 90)
        h.send(100, at: 100) // boundary: the old window fires first, this opens the next
        h.send(150, at: 150)
        h.advance(to: 500)
        XCTAssertEqual(h.fires, [held(90, 100), held(150, 200)])
        XCTAssertEqual(h.schedules, 2, "one timer per window, not per message")
        XCTAssertEqual(Set(h.tracker.released), Set([0, 30, 60, 90, 100, 150]))
    }

    func testBoundaryIsInclusive() {
        let h = Harness(.last, .milliseconds(100))
        h.send(0, at: 0)
        h.send(99, at: 99)
        h.send(100, at: 100)
        h.advance(to: 500)
        XCTAssertEqual(h.fires, [held(99, 100), held(100, 200)])
    }

    func testAWindowOpensWithAMessage() {
        // Messages at 0, 120, 200 (still inside [120, 220): not performed early, unlike lodash
        // throttle) and 250.
        assertMarbles("a-----------b-------c----d", .last, duration: 100,
                      "----------^a-----------^c------------^d")
    }

    func testNegativeDurationPerformsAtOnce() {
        let h = Harness(.last, .milliseconds(-1))
        XCTAssertEqual(h.send(1, at: 0), .now)
        XCTAssertEqual(h.send(2, at: 0), .now)
        XCTAssertEqual(h.fires, [now(1, 0), now(2, 0)])
        XCTAssertEqual(h.schedules, 0)
    }
}
