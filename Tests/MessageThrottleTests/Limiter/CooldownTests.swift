import TestSupport
import MessageThrottle
import XCTest

final class CooldownTests: XCTestCase {
    func testSingleCallRunsAtOnce() {
        let h = Harness(.cooldown, .milliseconds(100))
        XCTAssertEqual(h.send(1, at: 0), .now)
        XCTAssertEqual(h.fires, [now(1, 0)])
        XCTAssertTrue(h.tracker.rejected.isEmpty)
    }

    func testCallsWhileCoolingAreRejectedAndReported() {
        let h = Harness(.cooldown, .milliseconds(100))
        h.send(0, at: 0)
        XCTAssertEqual(h.send(10, at: 10), .dropped)
        XCTAssertEqual(h.send(50, at: 50), .dropped)
        XCTAssertEqual(h.send(99, at: 99), .dropped)
        XCTAssertEqual(h.send(100, at: 100), .now, "cooling ends exactly `duration` after the performed call")
        XCTAssertEqual(h.send(150, at: 150), .dropped)
        XCTAssertEqual(h.send(230, at: 230), .now, "rejected calls do not extend cooling")
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [now(0, 0), now(100, 100), now(230, 230)])
        XCTAssertEqual(h.tracker.rejected, [10, 50, 99, 150])
        XCTAssertEqual(h.schedules, 0)
    }

    func testRejectedPayloadIsReleasedAfterTheCallback() {
        let h = Harness(.cooldown, .milliseconds(100))
        h.send(0, at: 0)
        weak var weakProbe: Probe?
        do {
            let probe = h.probe(7)
            weakProbe = probe
            XCTAssertEqual(h.deliver(probe), .dropped)
        }
        XCTAssertNil(weakProbe)
        XCTAssertEqual(h.tracker.rejected, [7])
        XCTAssertTrue(h.tracker.released.contains(7))
    }

    func testZeroDurationNeverRejects() {
        let h = Harness(.cooldown, .zero)
        h.send(1, at: 0)
        h.send(2, at: 0)
        XCTAssertEqual(h.fires, [now(1, 0), now(2, 0)])
        XCTAssertTrue(h.tracker.rejected.isEmpty)
    }

    func testCancelEndsCooling() {
        let h = Harness(.cooldown, .milliseconds(100))
        h.send(0, at: 0)
        h.limiter.cancel()
        XCTAssertEqual(h.send(10, at: 10), .now)
    }
}
