import TestSupport
import Foundation
import MessageThrottle
import XCTest

/// One small real-time check per mode on a DispatchQueue. Bounds are generous:
/// only lower bounds on timing are asserted, upper bounds are timeouts.
final class RealTimeSmokeTests: XCTestCase {
    let window = Duration.milliseconds(100)
    let queue = DispatchQueue(label: "test.smoke")
    let key = DispatchSpecificKey<Bool>()
    let clock = MonotonicClock()

    override func setUp() {
        queue.setSpecific(key: key, value: true)
    }

    /// Sends ids 1...3 back to back; returns what the caller had to perform now,
    /// the delayed performances (with their instants), and the send times.
    private func run(
        _ mode: ThrottleMode, expectDelayed: Int, reject: Tracker? = nil
    ) -> (immediate: [Int], delayed: [(id: Int, at: ThrottleInstant)], sent: [ThrottleInstant]) {
        let delayed = Locked<[(id: Int, at: ThrottleInstant)]>([])
        let done = expectation(description: "\(mode)")
        done.expectedFulfillmentCount = max(expectDelayed, 1)
        if expectDelayed == 0 { done.fulfill() }
        let (key, clock) = (key, clock)
        let limiter = Limiter<Probe>(
            mode: mode, duration: window, executor: DispatchQueueExecutor(queue: queue),
            perform: { probe in
                XCTAssertEqual(DispatchQueue.getSpecific(key: key), true, "performed on the executor's queue")
                delayed.withLock { $0.append((probe.id, clock.now)) }
                done.fulfill()
            },
            reject: { reject?.reject($0.id) }
        )
        var immediate: [Int] = []
        var sent: [ThrottleInstant] = []
        for id in 1...3 {
            sent.append(clock.now)
            if case .performNow(let probe) = limiter.receive(Probe(id)) { immediate.append(probe.id) }
        }
        wait(for: [done], timeout: 5)
        // Nothing further may fire.
        queue.sync {}
        Thread.sleep(forTimeInterval: 0.1)
        queue.sync {}
        XCTAssertNil(limiter.pending)
        return (immediate, delayed.current, sent)
    }

    func testFirstly() {
        let r = run(.firstly, expectDelayed: 0)
        XCTAssertEqual(r.immediate, [1])
        XCTAssertTrue(r.delayed.isEmpty)
    }

    func testLast() {
        let r = run(.last, expectDelayed: 1)
        XCTAssertEqual(r.immediate, [])
        XCTAssertEqual(r.delayed.map(\.id), [3])
        XCTAssertGreaterThanOrEqual(r.delayed[0].at - r.sent[0], window)
    }

    func testDebounce() {
        let r = run(.debounce, expectDelayed: 1)
        XCTAssertEqual(r.delayed.map(\.id), [3])
        XCTAssertGreaterThanOrEqual(r.delayed[0].at - r.sent[2], window)
    }

    func testDebounceMaxWait() {
        let r = run(.debounceMaxWait(.milliseconds(150)), expectDelayed: 1)
        XCTAssertEqual(r.delayed.map(\.id), [3])
        XCTAssertGreaterThanOrEqual(r.delayed[0].at - r.sent[2], window)
    }

    func testThrottle() {
        let r = run(.throttle(leading: true, trailing: true), expectDelayed: 1)
        XCTAssertEqual(r.immediate, [1])
        XCTAssertEqual(r.delayed.map(\.id), [3])
        XCTAssertGreaterThanOrEqual(r.delayed[0].at - r.sent[0], window)
    }

    func testCooldown() {
        let rejected = Tracker()
        let r = run(.cooldown, expectDelayed: 0, reject: rejected)
        XCTAssertEqual(r.immediate, [1])
        XCTAssertEqual(rejected.rejected, [2, 3])
    }
}
