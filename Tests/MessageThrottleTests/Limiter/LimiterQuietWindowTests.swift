import TestSupport
import Foundation
import Synchronization
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// A `firstly` limiter drops a message inside its window without taking its lock
/// (`LimiterStateMachine.quietUntil`); every edit, cancel or held payload closes that shortcut,
/// so the decisions are the machine's own. The clock is read outside the lock.
final class LimiterQuietWindowTests: XCTestCase {
    private func makeLimiter(_ mode: ThrottleMode, _ d: Duration) -> (Limiter<Int>, ManualClock, Locked<[Int]>) {
        let clock = ManualClock()
        let performed = Locked<[Int]>([])
        let limiter = Limiter<Int>(mode: mode, duration: d, executor: ManualExecutor(clock: clock),
                                   perform: { p in performed.withLock { $0.append(p) } })
        return (limiter, clock, performed)
    }

    private func send(_ l: Limiter<Int>, _ p: Int, made: Locked<Int>? = nil) -> Limiter<Int>.Verdict {
        l.receive(making: { made?.withLock { $0 += 1 }; return p }).verdict
    }

    func testMessagesInsideTheWindowAreDroppedUntilItsEdge() {
        let (l, clock, _) = makeLimiter(.firstly, .seconds(10))
        XCTAssertEqual(send(l, 1), .performNow)
        let made = Locked(0)
        clock.advance(by: .seconds(3))
        for i in 0..<100 { XCTAssertEqual(send(l, i, made: made), .dropped) }
        XCTAssertEqual(made.current, 0, "a dropped firstly message makes no payload")
        clock.advance(by: .seconds(7) - .nanoseconds(1))
        XCTAssertEqual(send(l, 2), .dropped, "one nanosecond before the edge")
        clock.advance(by: .nanoseconds(1))
        XCTAssertEqual(send(l, 3), .performNow, "at the edge: the window was measured from the performance")
        XCTAssertEqual(send(l, 4), .dropped, "and a new window opened")
    }

    func testAnEditInsideTheWindowIsAdoptedByTheNextMessage() {
        let (l, clock, _) = makeLimiter(.firstly, .seconds(10))
        XCTAssertEqual(send(l, 1), .performNow)
        clock.advance(by: .seconds(2))
        XCTAssertEqual(send(l, 2), .dropped)
        l.duration = .seconds(1)
        XCTAssertEqual(send(l, 3), .performNow, "the shorter window already ended")
        XCTAssertEqual(send(l, 4), .dropped)
        l.mode = .last
        XCTAssertEqual(send(l, 5), .deferred, "a new mode judges the next message itself")
    }

    func testCancelAndCooldownAreNotShortcut() {
        let (l, clock, _) = makeLimiter(.firstly, .seconds(10))
        XCTAssertEqual(send(l, 1), .performNow)
        l.cancel()
        XCTAssertEqual(send(l, 2), .performNow, "cancel forgets the window")

        let rejected = Locked<[Int]>([])
        let cool = Limiter<Int>(mode: .cooldown, duration: .seconds(10), executor: ManualExecutor(clock: clock),
                                perform: { _ in }, reject: { p in rejected.withLock { $0.append(p) } })
        if case .performNow = cool.receive(8) {} else { XCTFail("the first message is performed") }
        _ = cool.receive(9)
        XCTAssertEqual(rejected.current, [9], "cooldown reports what it rejects: no silent shortcut")
    }

}

/// Run under TSan in CI (the class name contains `Concurrency`).
final class LimiterQuietWindowConcurrencyTests: XCTestCase {
    /// 8 threads send into one window while another edits the rule to the same values (each
    /// edit closes the shortcut until the next message runs the machine): exactly the first
    /// message is performed.
    func testConcurrentSendersInOneWindowPerformOnce() {
        let clock = ManualClock()
        let performed = Locked<[Int]>([])
        let l = Limiter<Int>(mode: .firstly, duration: .seconds(3600), executor: ManualExecutor(clock: clock),
                             perform: { p in performed.withLock { $0.append(p) } })
        let verdicts = Locked((now: 0, dropped: 0))
        DispatchQueue.concurrentPerform(iterations: 9) { t in
            if t == 8 {
                for _ in 0..<200 { l.duration = .seconds(3600) }
                return
            }
            for i in 0..<2000 {
                switch l.receive(making: { t * 10_000 + i }).verdict {
                case .performNow: verdicts.withLock { $0.now += 1 }
                case .dropped: verdicts.withLock { $0.dropped += 1 }
                case .deferred: XCTFail("firstly never defers")
                }
            }
        }
        XCTAssertEqual(verdicts.current.now, 1)
        XCTAssertEqual(verdicts.current.dropped, 8 * 2000 - 1)
        XCTAssertEqual(performed.current, [], "nothing was held to perform later")
    }
}
