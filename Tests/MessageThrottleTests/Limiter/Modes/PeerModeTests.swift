import TestSupport
@testable import MessageThrottle
import XCTest

/// The modes transcribed from the peers' own tests (lodash `debounce.spec.js`, underscore's
/// "debounce asap" tests, RxSwift `Observable+ThrottleTests`, swift-async-algorithms
/// `TestThrottle`, AXKit `ax_dispatch_cooldown`), on the state machine in virtual time.
final class PeerModeTests: XCTestCase {
    /// What was performed: `n!@t` at once, `^n@t` later.
    private func performed(_ run: MachineRun) -> [String] {
        run.marks.filter { $0.contains("!") || $0.hasPrefix("^") }
    }

    // MARK: - lodash debounce(wait, {leading: true})

    func testLeadingDebounceRunsAtTheStartAndOnceAtTheEndOfABurst() {
        // Calls every 10 ms for 200 ms, wait 32: runs at 0 (leading) and once at the end.
        var run = MachineRun(.leadingDebounce(), 32)
        run.send(at: Array(stride(from: 0, through: 190, by: 10)))
        run.advance(to: 1000)
        XCTAssertEqual(performed(run), ["0!@0", "^190@222"])
        XCTAssertEqual(run.arms, 7, "a timer re-arms when it fires early (every ~32 ms), not per call")
        XCTAssertTrue(run.isIdle)
    }

    func testLodashLeadingOption() {
        // lodash "should support a `leading` option": one call runs once; two calls run at
        // once and at the trailing edge; a call after quiet leads again.
        var withLeading = MachineRun(.leadingDebounce(), 32)
        withLeading.send(1, at: 0)
        var withBoth = MachineRun(.leadingDebounce(), 32)
        withBoth.send(at: [0, 0])
        XCTAssertEqual(performed(withBoth), ["0!@0"])
        withLeading.send(2, at: 64)
        withBoth.advance(to: 64)
        XCTAssertEqual(performed(withLeading), ["1!@0", "2!@64"])
        XCTAssertEqual(performed(withBoth), ["0!@0", "^0@32"])
    }

    func testLodashLeadingWithoutTrailingReturnsTheLeadingCallOnly() {
        // lodash "subsequent leading debounced calls return the last `func` result".
        var run = MachineRun(.leadingDebounce(trailing: false), 32)
        run.send(1, at: 0)
        run.send(2, at: 0)
        run.send(3, at: 64)
        run.send(4, at: 64)
        XCTAssertEqual(run.marks, ["1!@0", "x2@0", "3!@64", "x4@64"])
        XCTAssertEqual(run.arms, 0, "nothing is ever held")
    }

    func testLeadingDebounceWithAMaxWaitOtherThanWait() {
        // {leading: true, maxWait: 64}, wait 32, a call every 10 ms for 200 ms: the leading
        // call, then the latest call every 64 ms since the last run, then the end.
        var run = MachineRun(.leadingDebounce(maxWait: .milliseconds(64)), 32)
        run.send(at: Array(stride(from: 0, through: 190, by: 10)))
        run.advance(to: 1000)
        XCTAssertEqual(performed(run), ["0!@0", "^60@64", "^120@128", "^190@192"])
    }

    // MARK: - underscore debounce(…, immediate)

    func testUnderscoreDebounceAsap() {
        // "debounce asap": wait 64; calls at 0, 0, 16, 32, 48 run once; a call at 128 runs.
        var run = MachineRun(.leadingDebounce(trailing: false), 64)
        for (id, ms) in [(1, 0), (2, 0), (3, 16), (4, 32), (5, 48), (6, 128)] { run.send(id, at: ms) }
        XCTAssertEqual(run.marks, ["1!@0", "x2@0", "x3@16", "x4@32", "x5@48", "6!@128"])
    }

    func testUnderscoreImmediateStaysSilentUntilQuiet() {
        // Each call extends the silence: 60 is within 64 of 16, so it is dropped too.
        var run = MachineRun(.leadingDebounce(trailing: false), 64)
        run.send(at: [0, 16, 60, 124, 200])
        XCTAssertEqual(run.marks, ["0!@0", "x16@16", "x60@60", "124!@124", "200!@200"])
    }

    func testUnderscoreDebounceAsapCancel() {
        // "debounce asap cancel": after cancel the next call runs at once.
        var run = MachineRun(.leadingDebounce(trailing: false), 64)
        run.send(1, at: 0)
        run.cancel(at: 0)
        for (id, ms) in [(2, 0), (3, 16), (4, 32), (5, 48)] { run.send(id, at: ms) }
        run.advance(to: 128)
        XCTAssertEqual(performed(run), ["1!@0", "2!@0"])
    }

    // MARK: - RxSwift throttle(latest: true), swift-async-algorithms throttle(for:latest:)

    func testRxSwiftThrottleLatestMeasuresFromTheLastEmission() {
        // test_ThrottleTimeSpan_NoEnd: 2@210 … 7@450, due time 200. RxSwift emits 2@210, 6@410,
        // 7@610: its message at 410 is delivered before its timer at 410. Here the deadline
        // comes first (docs/modes.md, ties), so the held 5 runs at 410 and 6 waits.
        var run = MachineRun(.throttleSincePerformed(latest: true), 200)
        for (id, ms) in [(2, 210), (3, 250), (4, 310), (5, 350), (6, 410), (7, 450)] { run.send(id, at: ms) }
        run.advance(to: 2000)
        XCTAssertEqual(performed(run), ["2!@210", "^5@410", "^7@610"])
        // Without the tie, RxSwift and this mode agree: 6 at 420 is replaced by 7, due 610.
        var apart = MachineRun(.throttleSincePerformed(latest: true), 200)
        for (id, ms) in [(2, 210), (3, 250), (4, 310), (5, 350), (6, 420), (7, 450)] { apart.send(id, at: ms) }
        apart.advance(to: 2000)
        XCTAssertEqual(performed(apart), ["2!@210", "^5@410", "^7@610"])
    }

    func testWindowFromTheLastPerformanceNotFromTheLastCall() {
        // lodash throttle (window from the call that opened it) runs 120 at 220; measured
        // from the run at 100, it is due at 200.
        var lodash = MachineRun(.throttle(leading: true, trailing: true), 100)
        lodash.send(at: [0, 50, 120])
        lodash.advance(to: 1000)
        XCTAssertEqual(performed(lodash), ["0!@0", "^50@100", "^120@220"])
        var run = MachineRun(.throttleSincePerformed(latest: true), 100)
        run.send(at: [0, 50, 120])
        run.advance(to: 1000)
        XCTAssertEqual(performed(run), ["0!@0", "^50@100", "^120@200"])
    }

    func testLatestFalseKeepsTheFirstMessageOfTheWindow() {
        // swift-async-algorithms reduces with `previous ?? element` when latest is false.
        var run = MachineRun(.throttleSincePerformed(latest: false), 100)
        run.send(at: [0, 10, 20, 30, 150, 320])
        run.advance(to: 1000)
        // 150 is within 100 of the run at 100: held to 200. 320 is 120 after it: at once.
        XCTAssertEqual(run.marks, ["0!@0", "x20@20", "x30@30", "^10@100", "^150@200", "320!@320"])
        XCTAssertEqual(run.made, [10, 150], "a dropped message is never made")
    }

    func testAsyncAlgorithmsRate3Scenarios() {
        // TestThrottle test_rate_3 / test_rate_3_leading: "abcdefghijk", 3 steps. There a held
        // element is emitted only when a later one arrives (no timer), and that one is folded
        // in: "a--d--g--j--[k|]" and "a--b--e--h--[k|]". Here the window's end performs the
        // held message by itself, at the same instants, and the next message opens a window.
        assertMarbles("abcdefghijk", .throttleSincePerformed(latest: true), duration: 30,
                      "!--^c--^f--^i--^k")
        assertMarbles("abcdefghijk", .throttleSincePerformed(latest: false), duration: 30,
                      "!-x^bxx^dxx^gx-^j")
    }

    // MARK: - AXKit ax_dispatch_cooldown(delay, cooldown, token, …)

    func testDelayedCooldownRunsAfterTheDelayAndCoolsFromTheCall() {
        assertMarbles("ab---c----d-e", .delayedCooldown(delay: .milliseconds(30)), duration: 100,
                      "-R-^a-R------R^d")
    }

    func testCancellingTheDelayedMessageKeepsTheCooldown() {
        var run = MachineRun(.delayedCooldown(delay: .milliseconds(30)), 100)
        run.send(1, at: 0)
        XCTAssertTrue(run.machine.isPending(at: instant(ms: 0)))
        var action = run.machine.cancelPending()
        XCTAssertEqual(action.release, 1, "the delayed message is let go of")
        XCTAssertEqual(action.timer, .disarm)
        action.release = nil
        XCTAssertTrue(run.machine.isPending(at: instant(ms: 10)), "still cooling")
        XCTAssertFalse(run.machine.isPending(at: instant(ms: 100)))
    }

    func testCancelPendingThroughTheLimiterKeepsCooling() {
        let h = Harness(.delayedCooldown(delay: .milliseconds(30)), .milliseconds(100))
        XCTAssertEqual(h.send(1, at: 0), .deferred)
        h.advance(to: 10)
        h.limiter.cancelPending()
        XCTAssertTrue(h.tracker.released.contains(1))
        XCTAssertEqual(h.send(2, at: 50), .dropped)
        XCTAssertEqual(h.send(3, at: 100), .deferred, "the cooldown ran its 100 ms from the first call")
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [held(3, 130)])
        XCTAssertEqual(h.tracker.rejected, [2])
    }

    func testCallSitesSharingATokenShareTheCooldown() {
        let token = CooldownToken(name: "reload")
        var a = MachineRun(.delayedCooldown(delay: .zero, token: token), 100)
        var b = MachineRun(.delayedCooldown(delay: .milliseconds(20), token: token), 100)
        a.send(1, at: 0)
        b.send(2, at: 10)
        a.send(3, at: 50)
        b.send(4, at: 100)
        a.send(5, at: 150)
        b.advance(to: 1000)
        XCTAssertEqual(a.marks, ["1!@0", "R3@50", "R5@150"])
        XCTAssertEqual(b.marks, ["R2@10", "^4@120"])
        XCTAssertTrue(token.isCooling(at: instant(ms: 199)))
        XCTAssertFalse(token.isCooling(at: instant(ms: 200)))
    }

    // MARK: - lodash pending()

    func testPendingIsTrueWhileATimerWouldBeArmedIncludingAfterALeadingEdge() {
        let h = Harness(.leadingDebounce(), .milliseconds(32))
        XCTAssertFalse(h.limiter.isPending)
        XCTAssertEqual(h.send(1, at: 0), .now)
        XCTAssertTrue(h.limiter.isPending, "a leading-edge call arms lodash's timer")
        XCTAssertNil(h.limiter.pending, "though nothing is held")
        h.advance(to: 31)
        XCTAssertTrue(h.limiter.isPending)
        h.advance(to: 32)
        XCTAssertFalse(h.limiter.isPending)
        h.send(2, at: 40)
        h.send(3, at: 50)
        XCTAssertTrue(h.limiter.isPending)
        h.advance(to: 82)
        XCTAssertEqual(h.fires, [now(1, 0), now(2, 40), held(3, 82)])
        XCTAssertFalse(h.limiter.isPending)
    }

    func testPendingInEveryMode() {
        for mode in LimiterStateMachineEventTests.modes {
            var run = MachineRun(mode, 100)
            XCTAssertFalse(run.machine.isPending(at: instant(ms: 0)), "\(mode)")
            run.send(1, at: 0)
            XCTAssertTrue(run.machine.isPending(at: instant(ms: 50)), "\(mode): inside the window")
            run.advance(to: 1000)
            XCTAssertFalse(run.machine.isPending(at: instant(ms: 1000)), "\(mode): quiet")
        }
        var zero = MachineRun(.leadingDebounce(), 0)
        zero.send(1, at: 0)
        XCTAssertFalse(zero.machine.isPending(at: instant(ms: 0)), "no limiting, no window")
    }
}
