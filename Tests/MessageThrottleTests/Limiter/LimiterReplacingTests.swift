import TestSupport
import Foundation
import Synchronization
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// A payload one reference wide, so it moves through the limiter's slot; counts the live ones.
/// Its `id` may be rewritten in place while the limiter holds it (a refill).
final class SlotToken: @unchecked Sendable {
    static let live = Atomic<Int>(0)
    var id: Int
    init(_ id: Int) {
        self.id = id
        Self.live.add(1, ordering: .relaxed)
    }
    deinit { Self.live.subtract(1, ordering: .relaxed) }
}

/// Inside an open window of `last`, `throttleSincePerformed(latest: true)` or
/// `debounce`, a message only replaces the held payload; the limiter swaps it in without its
/// lock (`Limiter+Replacing.swift`). The slot must decide exactly what the machine decides.
final class LimiterReplacingTests: XCTestCase {
    private func makeLimiter(_ mode: ThrottleMode, _ d: Duration, clock: ManualClock)
        -> (Limiter<SlotToken>, Locked<[Int]>, Locked<[Int]>) {
        let performed = Locked<[Int]>([]), rejected = Locked<[Int]>([])
        let limiter = Limiter<SlotToken>(mode: mode, duration: d, executor: ManualExecutor(clock: clock),
                                         perform: { p in performed.withLock { $0.append(p.id) } },
                                         reject: { p in rejected.withLock { $0.append(p.id) } })
        return (limiter, performed, rejected)
    }

    private func isPublished<P>(_ l: Limiter<P>) -> Bool { l.slot.isPublished }

    func testWordPayloadsAreRecognised() {
        XCTAssertTrue(ReplacingSlot<SlotToken>.carries())
        XCTAssertTrue(ReplacingSlot<Invocation>.carries())
        XCTAssertFalse(ReplacingSlot<Int>.carries(), "Int? takes a ninth byte")
        XCTAssertFalse(ReplacingSlot<String>.carries())
    }

    /// A payload packed for the slot is owned by the package: dropped, it is released;
    /// unpacked, it is the same object; published and drained, it comes back once.
    func testAPackedPayloadIsReleasedOrHandedBackOnce() {
        let before = SlotToken.live.load(ordering: .relaxed)
        do {
            var payload: SlotToken? = SlotToken(1)
            let packed = ReplacingSlot<SlotToken>.pack(&payload)
            XCTAssertNil(payload, "taken out")
            XCTAssertTrue(packed != nil)
        }
        XCTAssertEqual(SlotToken.live.load(ordering: .relaxed), before, "a dropped package releases its payload")
        let token = SlotToken(2)
        var payload: SlotToken? = token
        let unpacked = ReplacingSlot<SlotToken>.pack(&payload)!.unpack()
        XCTAssertTrue(unpacked === token)
        let slot = ReplacingSlot<SlotToken>()
        var held: SlotToken? = SlotToken(3)
        slot.publish(ReplacingSlot.pack(&held)!, lastCall: 7, generation: 1)
        XCTAssertTrue(slot.isPublished)
        let claim = slot.claim()!
        XCTAssertEqual(slot.withHeld(claim) { $0.id }, 3)
        let (back, lastCall) = slot.takeBack(claim)
        XCTAssertEqual(back.id, 3)
        XCTAssertEqual(lastCall, 7)
        XCTAssertFalse(slot.isPublished)
        XCTAssertNil(slot.drain())
    }

    /// In `last`'s window, messages go through the slot: the machine holds nothing meanwhile,
    /// each message displaces the previous payload (handed back to the caller), and the edge
    /// performs the last one.
    func testMessagesInsideALastWindowSwapThroughTheSlot() {
        let clock = ManualClock()
        let (l, performed, _) = makeLimiter(.last, .milliseconds(100), clock: clock)
        XCTAssertEqual(l.receive(making: { SlotToken(1) }).verdict, .deferred)
        XCTAssertTrue(isPublished(l), "the window replaces from the first held message on")
        XCTAssertNil(l.storage.withLock { $0.machine.held }, "the held payload lives in the slot")
        clock.advance(to: instant(ms: 40))
        let (verdict, displaced) = l.receive(making: { SlotToken(2) })
        XCTAssertEqual(verdict, .deferred)
        XCTAssertEqual(displaced?.id, 1, "the displaced payload comes back to the caller")
        XCTAssertTrue(isPublished(l))
        XCTAssertEqual(l.pending?.id, 2, "an event under the lock takes the slot back")
        XCTAssertTrue(isPublished(l), "and publishes it again")
        XCTAssertEqual(l.receive(making: { SlotToken(3) }).displaced?.id, 2)
        clock.advance(to: instant(ms: 99))
        XCTAssertEqual(performed.current, [])
        clock.advance(to: instant(ms: 100))
        XCTAssertEqual(performed.current, [3])
        XCTAssertFalse(isPublished(l), "the window closed")
    }

    /// `debounce` through the slot: every message moves the deadline (its `lastCall`), which
    /// the timer reads when it fires.
    func testDebounceMessagesMoveTheDeadlineThroughTheSlot() {
        let clock = ManualClock()
        let (l, performed, _) = makeLimiter(.debounce, .milliseconds(100), clock: clock)
        XCTAssertEqual(l.receive(making: { SlotToken(1) }).verdict, .deferred)
        for (i, ms) in [50, 120, 190].enumerated() {
            clock.advance(to: instant(ms: ms))
            XCTAssertTrue(isPublished(l), "at \(ms)")
            XCTAssertEqual(l.receive(making: { SlotToken(i + 2) }).displaced?.id, i + 1)
        }
        XCTAssertEqual(performed.current, [], "each message came less than 100 ms after the last")
        XCTAssertEqual(l.pendingDeadline, instant(ms: 290))
        clock.advance(to: instant(ms: 289))
        XCTAssertEqual(performed.current, [])
        clock.advance(to: instant(ms: 290))
        XCTAssertEqual(performed.current, [4])
    }

    /// Random sequences of messages, clock moves, edits, flushes and cancels with payloads that
    /// move through the slot: the limiter and the bare machine decide every message alike and
    /// perform, reject and hold the same payloads; the slot was published before many of them.
    func testTheSlotDecidesAsTheMachineDoes() {
        var rng = SplitMix(seed: 26)
        let durations = [0, -5, 30, 100]
        var throughSlot = 0
        for round in 0..<400 {
            let modes = LimiterStateMachineEventTests.modes
            let mode = modes[round % modes.count]
            let start = durations[Int(rng.next() % UInt64(durations.count))]
            let clock = ManualClock()
            let (l, performed, rejected) = makeLimiter(mode, .milliseconds(start), clock: clock)
            var run = MachineRun(mode, start)
            let (verdicts, expected, log) = replayRandomSteps(l, &run, clock: clock, rng: &rng, durations: durations) { id in
                if isPublished(l) { throughSlot += 1 }
                return String(describing: l.receive(making: { SlotToken(id) }).verdict)
            }
            XCTAssertEqual(verdicts, expected, "\(mode) d=\(start): \(log)")
            XCTAssertEqual(performed.current, run.performedLater, "\(mode) d=\(start): \(log)")
            XCTAssertEqual(rejected.current, run.rejectedPayloads, "\(mode) d=\(start): \(log)")
            XCTAssertEqual(l.pending?.id, run.machine.held, "\(mode) d=\(start): \(log)")
            XCTAssertEqual(l.pendingDeadline, run.machine.pendingDeadline, "\(mode) d=\(start): \(log)")
        }
        XCTAssertGreaterThan(throughSlot, 300, "messages were sent while the slot was published")
    }

    /// An executor whose timers are late: they run only when `fireAll()` says so.
    private final class LateExecutor: ThrottleExecutor, @unchecked Sendable {
        let manual: ManualClock
        private let due = Locked<[@Sendable () -> Void]>([])
        init(_ clock: ManualClock) { manual = clock }
        var clock: any ThrottleClock { manual }
        func execute(_ work: @escaping @Sendable () -> Void) { due.withLock { $0.append(work) } }
        func schedule(at deadline: ThrottleInstant, _ work: @escaping @Sendable () -> Void) -> any ThrottleCancellable {
            due.withLock { $0.append(work) }
            return NoCancel()
        }
        struct NoCancel: ThrottleCancellable { func cancel() {} }
    }

    /// A message at the window's edge, its timer late: the machine settles the edge first (the
    /// held payload is performed) and the message opens the next window. The slot must not
    /// take it as a replacement (`<`, not `<=`), for `last` (fixed edge) and `debounce` (the
    /// edge follows the last call).
    func testAMessageAtTheEdgeWithTheTimerLateIsNotAReplacement() {
        for mode in [ThrottleMode.last, .debounce] {
            let clock = ManualClock()
            let performed = Locked<[Int]>([])
            let l = Limiter<SlotToken>(mode: mode, duration: .milliseconds(100), executor: LateExecutor(clock),
                                       perform: { p in performed.withLock { $0.append(p.id) } })
            _ = l.receive(making: { SlotToken(1) })
            clock.advance(to: instant(ms: 60))
            XCTAssertEqual(l.receive(making: { SlotToken(2) }).displaced?.id, 1, "\(mode): inside the window")
            // last: the edge stays at 100; debounce: 60 + 100, then 159 + 100.
            clock.advance(to: instant(ms: mode == .last ? 99 : 159))
            XCTAssertEqual(l.receive(making: { SlotToken(3) }).displaced?.id, 2, "\(mode): 1 ms before the edge")
            XCTAssertTrue(isPublished(l))
            clock.advance(to: instant(ms: mode == .last ? 100 : 259))
            XCTAssertEqual(l.receive(making: { SlotToken(4) }).verdict, .deferred)
            XCTAssertEqual(performed.current, [3], "\(mode): the late edge performed the held payload first")
            XCTAssertEqual(l.pending?.id, 4, "\(mode)")
        }
    }

    /// A message whose caller can rewrite the held payload refills it under the slot's claim:
    /// nothing is made or displaced, the deadline moves as for a swap, and a payload the
    /// caller declines is swapped as before.
    func testARefillRewritesTheHeldPayloadInsteadOfSwapping() {
        for mode in [ThrottleMode.last, .debounce] {
            let clock = ManualClock()
            let performed = Locked<[Int]>([])
            let l = Limiter<SlotToken>(mode: mode, duration: .milliseconds(100), executor: ManualExecutor(clock: clock),
                                       perform: { p in performed.withLock { $0.append(p.id) } })
            var made = 0
            func send(_ v: Int, refill: Bool) -> (Limiter<SlotToken>.Verdict, Int?) {
                let (verdict, displaced) = l.receiveKept(at: l.now, making: {
                    made += 1
                    return SlotToken(v)
                }, refills: true, refilling: { held in
                    guard refill, isKnownUniquelyReferenced(&held) else { return false }
                    held.id = v
                    return true
                })
                return (verdict, displaced?.id)
            }
            XCTAssertTrue(send(1, refill: true) == (.deferred, nil), "\(mode): the first message is made")
            XCTAssertEqual(made, 1)
            clock.advance(to: instant(ms: 50))
            XCTAssertTrue(send(2, refill: true) == (.deferred, nil), "\(mode): refilled, nothing displaced")
            XCTAssertEqual(made, 1, "\(mode): refilled without making a payload")
            XCTAssertTrue(isPublished(l))
            clock.advance(to: instant(ms: 60))
            XCTAssertTrue(send(3, refill: false) == (.deferred, 2), "\(mode): declined: swapped, 2 displaced")
            XCTAssertEqual(made, 2)
            let held = l.pending
            XCTAssertEqual(held?.id, 3)
            XCTAssertTrue(send(4, refill: true) == (.deferred, 3), "\(mode): a payload someone else holds is swapped")
            XCTAssertEqual(held?.id, 3, "\(mode): and left as it was")
            XCTAssertEqual(l.pendingDeadline, instant(ms: mode == .last ? 100 : 160), "\(mode): the deadline")
            clock.advance(to: instant(ms: 200))
            XCTAssertEqual(performed.current, [4], "\(mode)")
            XCTAssertFalse(isPublished(l), "\(mode)")
        }
    }

    /// A refill at the window's edge is not taken: the message goes under the lock, which
    /// settles the edge first, and makes its own payload.
    func testARefillPastTheEdgeTakesTheLock() {
        let clock = ManualClock()
        let performed = Locked<[Int]>([])
        let l = Limiter<SlotToken>(mode: .last, duration: .milliseconds(100), executor: LateExecutor(clock),
                                   perform: { p in performed.withLock { $0.append(p.id) } })
        var refilled = 0
        func send(_ v: Int) -> Limiter<SlotToken>.Verdict {
            l.receiveKept(at: l.now, making: { SlotToken(v) }, refills: true, refilling: { held in
                refilled += 1
                held.id = v
                return true
            }).verdict
        }
        XCTAssertEqual(send(1), .deferred)
        clock.advance(to: instant(ms: 99))
        XCTAssertEqual(send(2), .deferred)
        XCTAssertEqual(refilled, 1)
        clock.advance(to: instant(ms: 100))
        XCTAssertEqual(send(3), .deferred)
        XCTAssertEqual(refilled, 1, "past the edge")
        XCTAssertEqual(performed.current, [2], "the late edge performed the refilled payload first")
        XCTAssertEqual(l.pending?.id, 3)
    }

    /// Releasing the limiter releases a payload held in the slot (without performing it).
    func testReleasingTheLimiterReleasesTheSlotsPayload() {
        let before = SlotToken.live.load(ordering: .relaxed)
        do {
            let clock = ManualClock()
            let (l, performed, _) = makeLimiter(.last, .milliseconds(100), clock: clock)
            _ = l.receive(making: { SlotToken(1) })
            _ = l.receive(making: { SlotToken(2) })
            XCTAssertTrue(isPublished(l))
            XCTAssertEqual(performed.current, [])
        }
        XCTAssertEqual(SlotToken.live.load(ordering: .relaxed), before)
    }
}

/// Run under TSan in CI (the class name contains `Concurrency`).
final class LimiterReplacingConcurrencyTests: XCTestCase {
    /// Eight senders each call `send(thread, i)` 2,000 times while a ninth moves `clock` on by
    /// 1 ms 400 times, calling `step` after each move.
    private func storm(_ clock: ManualClock, step: @Sendable (Int) -> Void, send: @Sendable (Int, Int) -> Void) {
        DispatchQueue.concurrentPerform(iterations: 9) { t in
            if t == 8 {
                for n in 0..<400 {
                    clock.advance(by: .milliseconds(1))
                    step(n)
                }
                return
            }
            for i in 0..<2000 { send(t, i) }
        }
    }

    /// A limiter of `mode` with 5 ms windows on a manual clock, appending each payload it
    /// performs to `performed`.
    private func recordingLimiter(_ mode: ThrottleMode, into performed: Locked<[Int]>) -> (ManualClock, Limiter<SlotToken>) {
        let clock = ManualClock()
        let l = Limiter<SlotToken>(mode: mode, duration: .milliseconds(5), executor: ManualExecutor(clock: clock),
                                   perform: { p in performed.withLock { $0.append(p.id) } })
        return (clock, l)
    }

    /// 8 threads swap payloads through the slot of a `last` and a `debounce` limiter while a
    /// 9th moves the clock (timers fire and take the slot back), rewrites the duration and
    /// flushes. No payload is performed twice or lost track of: once everything is flushed and
    /// the limiters released, every payload made has been released, and the performances
    /// came in order of the windows (each performed payload was made before the next).
    func testConcurrentSwapsAreEachPerformedOnceOrReleased() {
        for mode in [ThrottleMode.last, .debounce, .throttleSincePerformed(latest: true)] {
            let before = SlotToken.live.load(ordering: .relaxed)
            let made = Atomic<Int>(0)
            let performed = Locked<[Int]>([])
            do {
                let (clock, l) = recordingLimiter(mode, into: performed)
                storm(clock, step: { step in
                    if step % 50 == 0 { l.duration = .milliseconds(step % 100 == 0 ? 5 : 7) }
                    if step % 70 == 0 { l.flush() }
                }, send: { t, i in
                    _ = l.receive(making: {
                        made.add(1, ordering: .relaxed)
                        return SlotToken(t * 100_000 + i)
                    })
                })
                l.flush()
                XCTAssertNil(l.pending, "\(mode)")
                let ids = performed.current
                XCTAssertEqual(Set(ids).count, ids.count, "\(mode): a payload performed twice")
                XCTAssertGreaterThan(ids.count, 0, "\(mode)")
                XCTAssertLessThanOrEqual(ids.count, made.load(ordering: .relaxed), "\(mode)")
                // The last payload sent after the storm is the one performed.
                if l.receive(making: { SlotToken(-1) }).verdict == .performNow { performed.withLock { $0.append(-1) } }
                clock.advance(by: .seconds(1))
                XCTAssertEqual(performed.current.last, -1, "\(mode)")
            }
            XCTAssertEqual(SlotToken.live.load(ordering: .relaxed), before, "\(mode): every payload made was released")
        }
    }

    /// As above, with every sender refilling the held payload when nobody else holds it (a
    /// plain write, ordered by the slot's claim) and swapping otherwise, while the clock
    /// thread's timers and flushes take the slot back and perform what it held.
    func testConcurrentRefillsAreEachPerformedOnceOrReleased() {
        for mode in [ThrottleMode.last, .debounce] {
            let before = SlotToken.live.load(ordering: .relaxed)
            let refills = Atomic<Int>(0)
            let performed = Locked<[Int]>([])
            do {
                let (clock, l) = recordingLimiter(mode, into: performed)
                storm(clock, step: { step in
                    if step % 70 == 0 { l.flush() }
                    if step % 90 == 0 { _ = l.pending?.id }
                }, send: { t, i in
                    let v = t * 100_000 + i
                    _ = l.receiveKept(at: l.now, making: { SlotToken(v) }, refills: true, refilling: { held in
                        guard isKnownUniquelyReferenced(&held) else { return false }
                        held.id = v
                        refills.add(1, ordering: .relaxed)
                        return true
                    })
                })
                l.flush()
                XCTAssertNil(l.pending, "\(mode)")
                let values = performed.current
                XCTAssertEqual(Set(values).count, values.count, "\(mode): a message performed twice")
                XCTAssertGreaterThan(values.count, 0, "\(mode)")
                XCTAssertGreaterThan(refills.load(ordering: .relaxed), 0, "\(mode): messages were refilled")
            }
            XCTAssertEqual(SlotToken.live.load(ordering: .relaxed), before, "\(mode): every payload made was released")
        }
    }
}
