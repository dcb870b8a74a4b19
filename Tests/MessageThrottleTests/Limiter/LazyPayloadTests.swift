import TestSupport
import MessageThrottle
import XCTest

/// `receive(making:)` makes a payload only when the limiter keeps it, so a throttled call
/// performed at once or dropped inside its window costs no invocation record (the engine's
/// hot path).
final class LazyPayloadTests: XCTestCase {
    /// Sends at `ms` through `receive(making:)`; returns the outcome, whether a payload was
    /// made, and the id of the payload it displaced.
    private func send(_ h: Harness, _ id: Int, at ms: Int) -> (Outcome, made: Bool, displaced: Int?) {
        h.advance(to: ms)
        var made = false
        let (verdict, displaced) = h.limiter.receive(making: {
            made = true
            return h.probe(id)
        })
        switch verdict {
        case .performNow: return (.now, made, displaced?.id)
        case .dropped: return (.dropped, made, displaced?.id)
        case .deferred: return (.deferred, made, displaced?.id)
        }
    }

    func testFirstlyMakesNoPayloadToPerformOrDropACall() {
        let h = Harness(.firstly, .milliseconds(100))
        XCTAssertTrue(send(h, 1, at: 0) == (.now, false, nil))
        for ms in stride(from: 10, through: 90, by: 10) {
            XCTAssertTrue(send(h, ms, at: ms) == (.dropped, false, nil), "\(ms)")
        }
        XCTAssertTrue(send(h, 2, at: 100) == (.now, false, nil))
    }

    func testZeroDurationPerformsEverythingWithoutAPayload() {
        let h = Harness(.last, .zero)
        for ms in 0..<5 { XCTAssertTrue(send(h, ms, at: ms) == (.now, false, nil)) }
    }

    func testCooldownMakesAPayloadOnlyToReportTheRejection() {
        let h = Harness(.cooldown, .milliseconds(100))
        XCTAssertTrue(send(h, 1, at: 0) == (.now, false, nil))
        XCTAssertTrue(send(h, 2, at: 50) == (.dropped, true, 2), "handed back once reject had it, for reuse")
        XCTAssertEqual(h.tracker.rejected, [2])
    }

    func testLastHandsBackTheCallItDisplaces() {
        let h = Harness(.last, .milliseconds(100))
        XCTAssertTrue(send(h, 1, at: 0) == (.deferred, true, nil))
        XCTAssertTrue(send(h, 2, at: 10) == (.deferred, true, 1), "the caller may reuse 1's record")
        XCTAssertTrue(send(h, 3, at: 20) == (.deferred, true, 2))
        h.advance(to: 100)
        XCTAssertEqual(h.fires, [held(3, 100)])
    }

    func testThrottleWithoutTrailingEdgeMakesNoPayloadInsideTheWindow() {
        let h = Harness(.throttle(leading: true, trailing: false), .milliseconds(100))
        XCTAssertTrue(send(h, 1, at: 0) == (.now, false, nil))
        XCTAssertTrue(send(h, 2, at: 50) == (.dropped, false, nil))
    }
}
