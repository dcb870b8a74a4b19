import TestSupport
import MessageThrottle
import XCTest

final class FirstlyTests: XCTestCase {
    func testSingleCallIsPerformedAtOnce() {
        let h = Harness(.firstly, .milliseconds(100))
        XCTAssertEqual(h.send(1, at: 0), .now)
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [now(1, 0)])
        XCTAssertEqual(h.schedules, 0, "firstly needs no timer")
    }

    func testBurstKeepsOnlyTheFirstPerWindow() {
        let h = Harness(.firstly, .milliseconds(100))
        for ms in stride(from: 0, through: 90, by: 10) {
            XCTAssertEqual(h.send(ms, at: ms), ms == 0 ? .now : .dropped)
        }
        h.send(150, at: 150)
        h.send(200, at: 200)
        h.send(260, at: 260)
        XCTAssertEqual(h.fires, [now(0, 0), now(150, 150), now(260, 260)])
        XCTAssertEqual(Set(h.tracker.released), Set([10, 20, 30, 40, 50, 60, 70, 80, 90, 200, 0, 150, 260]))
    }

    func testBoundaryIsInclusive() {
        let h = Harness(.firstly, .milliseconds(100))
        h.send(0, at: 0)
        XCTAssertEqual(h.send(99, at: 99), .dropped)
        XCTAssertEqual(h.send(100, at: 100), .now, "a message exactly `duration` after the last performed one starts a new window")
        XCTAssertEqual(h.fires, [now(0, 0), now(100, 100)])
    }

    func testWindowIsMeasuredFromThePerformedMessage() {
        let h = Harness(.firstly, .milliseconds(100))
        h.send(0, at: 0)
        h.send(60, at: 60)
        XCTAssertEqual(h.send(100, at: 100), .now, "ignored messages do not extend the window")
    }

    func testZeroAndNegativeDurationPerformEverything() {
        for duration in [Duration.zero, .milliseconds(-5)] {
            let h = Harness(.firstly, duration)
            h.send(1, at: 0)
            h.send(2, at: 0)
            h.send(3, at: 1)
            XCTAssertEqual(h.fires, [now(1, 0), now(2, 0), now(3, 1)])
        }
    }
}
