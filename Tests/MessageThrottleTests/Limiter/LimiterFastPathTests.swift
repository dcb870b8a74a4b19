import TestSupport
import Foundation
import Synchronization
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// A limiter decides some messages without its lock (firstly's quiet window drops
/// them; a limiter that limits nothing passes them, recording their instants in one atomic
/// word), and the machine reads durations as nanoseconds worked out when they are set. Each
/// shortcut must decide exactly what the machine decides.
final class LimiterFastPathTests: XCTestCase {
    private func makeLimiter(_ mode: ThrottleMode, _ d: Duration, clock: ManualClock)
        -> (Limiter<Int>, Locked<[Int]>, Locked<[Int]>) {
        let performed = Locked<[Int]>([]), rejected = Locked<[Int]>([])
        let limiter = Limiter<Int>(mode: mode, duration: d, executor: ManualExecutor(clock: clock),
                                   perform: { p in performed.withLock { $0.append(p) } },
                                   reject: { p in rejected.withLock { $0.append(p) } })
        return (limiter, performed, rejected)
    }

    private func send(_ l: Limiter<Int>, _ p: Int) -> Limiter<Int>.Verdict { l.receive(making: { p }).verdict }

    /// Messages passed without the lock still count: a window adopted later is measured from
    /// the last of them (firstly), and lodash's `lastCall` is theirs (debounce).
    func testMessagesPassedWithoutTheLockAreTheHistoryTheNextEditJudgesBy() {
        let clock = ManualClock()
        let (l, _, _) = makeLimiter(.firstly, .zero, clock: clock)
        XCTAssertEqual(send(l, 1), .performNow)
        clock.advance(to: instant(ms: 10))
        XCTAssertEqual(send(l, 2), .performNow)
        XCTAssertNotEqual(l.passedAt.load(ordering: .relaxed), .min, "the limiter passes messages without its lock")
        clock.advance(to: instant(ms: 50))
        l.duration = .milliseconds(100)
        XCTAssertEqual(l.passedAt.load(ordering: .relaxed), .min, "an edit takes the lock back")
        clock.advance(to: instant(ms: 60))
        XCTAssertEqual(send(l, 3), .dropped, "60 - 10 < 100: the window runs from the message passed at 10")
        clock.advance(to: instant(ms: 110))
        XCTAssertEqual(send(l, 4), .performNow, "110 - 10 >= 100")

        let (d, performed, _) = makeLimiter(.debounce, .zero, clock: clock)
        XCTAssertEqual(send(d, 1), .performNow)
        clock.advance(to: instant(ms: 150))
        XCTAssertEqual(send(d, 2), .performNow)
        d.duration = .milliseconds(100)
        XCTAssertEqual(send(d, 3), .deferred, "lastCall = 150: no leading edge, held")
        XCTAssertEqual(d.pendingDeadline, instant(ms: 250))
        clock.advance(to: instant(ms: 250))
        XCTAssertEqual(performed.current, [3])
    }

    /// A flush, a stale timer or a cancel moves the limiter's instants without a message: the
    /// shortcut is published again only once the history stands at the latest instant.
    func testPassingResumesAfterFlushAndCancel() {
        let clock = ManualClock()
        let (l, _, _) = makeLimiter(.firstly, .zero, clock: clock)
        XCTAssertEqual(send(l, 1), .performNow)
        clock.advance(to: instant(ms: 40))
        XCTAssertFalse(l.flush())
        XCTAssertEqual(l.passedAt.load(ordering: .relaxed), .min, "history (0) is behind the flush (40)")
        XCTAssertEqual(send(l, 2), .performNow)
        XCTAssertEqual(l.passedAt.load(ordering: .relaxed), instant(ms: 40).nanoseconds)
        l.cancel()
        XCTAssertEqual(l.passedAt.load(ordering: .relaxed), .min, "cancel forgets the history")
        l.duration = .milliseconds(100)
        XCTAssertEqual(send(l, 3), .performNow, "the first message after cancel")
    }

    /// A duration with a fraction of a nanosecond: windows are still judged exactly.
    func testSubNanosecondDurationsAreJudgedExactly() {
        let clock = ManualClock()
        let d = Duration.nanoseconds(100) + Duration(secondsComponent: 0, attosecondsComponent: 1)
        let (l, _, _) = makeLimiter(.firstly, d, clock: clock)
        XCTAssertEqual(send(l, 1), .performNow)
        clock.advance(to: ThrottleInstant(nanoseconds: 100))
        XCTAssertEqual(send(l, 2), .dropped, "100 ns < 100 ns + 1 as")
        clock.advance(to: ThrottleInstant(nanoseconds: 101))
        XCTAssertEqual(send(l, 3), .performNow)
        XCTAssertEqual(Span(d).whole, 100)
        XCTAssertEqual(Span(d).atLeast, 101)
        XCTAssertEqual(Span(.nanoseconds(-5) - Duration(secondsComponent: 0, attosecondsComponent: 1)).atLeast, -5)
        XCTAssertEqual(Span(.seconds(Int64.max)).whole, .max, "saturated")
        XCTAssertEqual(Span(.seconds(Int64.max)).atLeast, .max)
    }

    /// Random sequences of messages, clock moves, edits, flushes and cancels: the limiter (with
    /// its quiet and passing shortcuts) and the bare machine decide every message alike and
    /// perform, reject and hold the same payloads.
    func testTheShortcutsDecideAsTheMachineDoes() {
        var rng = SplitMix(seed: 12)
        let durations = [0, -5, 30, 100]
        for round in 0..<400 {
            let mode = LimiterStateMachineEventTests.modes[round % LimiterStateMachineEventTests.modes.count]
            let start = durations[Int(rng.next() % UInt64(durations.count))]
            let clock = ManualClock()
            let (l, performed, rejected) = makeLimiter(mode, .milliseconds(start), clock: clock)
            var run = MachineRun(mode, start)
            let (verdicts, expected, log) = replayRandomSteps(l, &run, clock: clock, rng: &rng, durations: durations) {
                String(describing: self.send(l, $0))
            }
            XCTAssertEqual(verdicts, expected, "\(mode) d=\(start): \(log)")
            XCTAssertEqual(performed.current, run.performedLater, "\(mode) d=\(start): \(log)")
            XCTAssertEqual(rejected.current, run.rejectedPayloads, "\(mode) d=\(start): \(log)")
            XCTAssertEqual(l.pending, run.machine.held, "\(mode) d=\(start): \(log)")
        }
    }
}

/// Run under TSan in CI (the class name contains `Concurrency`).
final class LimiterPassThroughConcurrencyTests: XCTestCase {
    /// 8 threads pass messages without the lock while another moves the clock two hours on and
    /// rewrites the duration to the same zero (each edit takes the word back; the next message
    /// runs the machine and publishes it again); then 8 threads send at the final instant and the
    /// rule gets a one-hour window. Every message was performed, and the window runs from the
    /// last of them: had a fold lost the latest instant, the next message would be performed.
    func testConcurrentPassesAreFoldedBeforeTheNextEdit() {
        let clock = ManualClock()
        let l = Limiter<Int>(mode: .firstly, duration: .zero, executor: ManualExecutor(clock: clock), perform: { _ in })
        let performedNow = Atomic<Int>(0)
        @Sendable func sendMany(_ t: Int, _ n: Int) {
            for i in 0..<n {
                if case .performNow = l.receive(making: { t * 10_000 + i }).verdict {
                    performedNow.add(1, ordering: .relaxed)
                }
            }
        }
        DispatchQueue.concurrentPerform(iterations: 9) { t in
            if t == 8 {
                for _ in 0..<120 {
                    clock.advance(by: .seconds(60))
                    l.duration = .zero
                }
                return
            }
            sendMany(t, 3000)
        }
        DispatchQueue.concurrentPerform(iterations: 8) { t in sendMany(t, 100) }
        XCTAssertEqual(performedNow.load(ordering: .relaxed), 8 * 3100)
        l.duration = .seconds(3600)
        XCTAssertEqual(l.receive(making: { 0 }).verdict, .dropped, "the window runs from the last passed message")
        l.duration = .zero
        XCTAssertEqual(l.receive(making: { 0 }).verdict, .performNow)
    }
}
