import TestSupport
import MessageThrottle
import XCTest

/// Payloads are released as soon as they are performed or dropped, and never
/// while the limiter's lock is held.
final class ReleaseTests: XCTestCase {
    /// Delivers a fresh probe 1 to `h` and keeps no reference to it, so that what the limiter
    /// does with it decides its lifetime: the outcome, and a weak look at the probe.
    private func deliverUnowned(_ h: Harness) -> (Outcome, () -> Probe?) {
        let probe = h.probe(1)
        return (h.deliver(probe), { [weak probe] in probe })
    }

    func testHeldPayloadIsReleasedRightAfterItIsPerformed() {
        for mode in [ThrottleMode.last, .debounce, .debounceMaxWait(.milliseconds(150)), .throttle(leading: false, trailing: true)] {
            let h = Harness(mode, .milliseconds(100))
            let (outcome, weakProbe) = deliverUnowned(h)
            XCTAssertEqual(outcome, .deferred, "\(mode)")
            XCTAssertNotNil(weakProbe(), "\(mode): held until performed")
            h.advance(to: 1000)
            XCTAssertEqual(h.fires, [held(1, 100)], "\(mode)")
            XCTAssertNil(weakProbe(), "\(mode): released after perform")
        }
    }

    func testReplacedPayloadIsReleasedBeforeReceiveReturns() {
        for mode in [ThrottleMode.last, .debounce, .debounceMaxWait(.milliseconds(150)), .throttle(leading: true, trailing: true)] {
            let h = Harness(mode, .milliseconds(100))
            h.send(0, at: 0)
            let (_, weakProbe) = deliverUnowned(h)
            h.send(2, at: 10)
            XCTAssertNil(weakProbe(), "\(mode): superseded payload released at once")
            XCTAssertTrue(h.tracker.released.contains(1))
        }
    }

    func testDroppedPayloadIsNotRetained() {
        for mode in [ThrottleMode.firstly, .cooldown, .throttle(leading: true, trailing: false)] {
            let h = Harness(mode, .milliseconds(100))
            h.send(0, at: 0)
            let (outcome, weakProbe) = deliverUnowned(h)
            XCTAssertEqual(outcome, .dropped, "\(mode)")
            XCTAssertNil(weakProbe(), "\(mode)")
        }
    }

    func testPerformNowPayloadIsOwnedByTheCallerOnly() {
        let h = Harness(.firstly, .milliseconds(100))
        let (outcome, weakProbe) = deliverUnowned(h)
        XCTAssertEqual(outcome, .now)
        XCTAssertNil(weakProbe())
    }

    func testCancelledAndLimiterDeinitReleasePayloads() {
        let clock = ManualClock()
        let tracker = Tracker()
        weak var weakProbe: Probe?
        weak var weakLimiter: Limiter<Probe>?
        do {
            let limiter = Limiter<Probe>(mode: .debounce, duration: .milliseconds(100), executor: ManualExecutor(clock: clock)) {
                tracker.fire(Fire(id: $0.id, ms: milliseconds(clock.now), via: .limiter))
            }
            weakLimiter = limiter
            let probe = Probe(1)
            weakProbe = probe
            _ = limiter.receive(probe)
            XCTAssertEqual(clock.scheduledCount, 1)
        }
        XCTAssertNil(weakLimiter, "timers do not retain the limiter")
        XCTAssertNil(weakProbe, "releasing the limiter drops its payload")
        XCTAssertEqual(clock.scheduledCount, 0, "and cancels its timer")
        clock.advance(to: instant(ms: 1000))
        XCTAssertEqual(tracker.fires, [])
    }

    /// A payload whose deinit calls back into the limiter would deadlock if it
    /// were released under the lock.
    func testPayloadReleaseHappensOutsideTheLock() {
        let clock = ManualClock()
        let box = LimiterBox()
        let limiter = Limiter<Probe>(mode: .debounce, duration: .milliseconds(100), executor: ManualExecutor(clock: clock)) { _ in }
        box.limiter = limiter
        let reentered = Tracker()
        let onRelease: @Sendable (Int) -> Void = { id in
            _ = box.limiter?.pending // takes the lock
            reentered.release(id)
        }
        _ = limiter.receive(Probe(1, onRelease: onRelease))
        _ = limiter.receive(Probe(2, onRelease: onRelease)) // releases 1
        clock.advance(to: instant(ms: 1000)) // performs and releases 2
        _ = limiter.receive(Probe(3, onRelease: onRelease))
        limiter.cancel() // releases 3
        XCTAssertEqual(reentered.released, [1, 2, 3])
    }

    /// perform and reject may call back into the limiter.
    func testCallbacksMayReenterTheLimiter() {
        let clock = ManualClock()
        let box = LimiterBox()
        let tracker = Tracker()
        let limiter = Limiter<Probe>(
            mode: .last, duration: .milliseconds(100), executor: ManualExecutor(clock: clock),
            // Weakly: box -> limiter -> perform -> box would be a cycle that outlives the test
            // (LeakSanitizer reports it).
            perform: { [weak box] probe in
                tracker.fire(Fire(id: probe.id, ms: milliseconds(clock.now), via: .limiter))
                if probe.id < 3 { _ = box?.limiter?.receive(Probe(probe.id + 1)) }
            }
        )
        box.limiter = limiter
        _ = limiter.receive(Probe(1))
        clock.advance(to: instant(ms: 1000))
        XCTAssertEqual(tracker.fires, [held(1, 100), held(2, 200), held(3, 300)])
    }
}

final class LimiterBox: @unchecked Sendable {
    var limiter: Limiter<Probe>?
}
