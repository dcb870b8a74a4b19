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
        // A message every 10ms from 0 to 90, then at 150, 200 and 260.
        let h = assertMarbles("abcdefghij-----k----l-----m", .firstly, duration: 100,
                              "!xxxxxxxxx-----!----x-----!")
        XCTAssertEqual(Set(h.tracker.released), Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 20, 26]), "every payload is released")
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
