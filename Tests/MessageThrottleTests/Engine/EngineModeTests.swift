import TestSupport
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// Each mode through the engine: real classes, hooks and sends, in virtual time.
/// Durations are 100 ms unless said otherwise; `tick:` returns `arg * 10` when performed at
/// once and the caller gets 0 (`.zero`) when its call is dropped or deferred.
final class EngineModeTests: XCTestCase {
    private let d = Duration.milliseconds(100)

    // MARK: - A single call

    func testASingleCallIsPerformedExactlyOnceInEveryMode() throws {
        for mode in allEngineModes {
            let fx = try makeFixture()
            let obj = try fx.instance()
            let rule = try obj.limit("tick:", oncePer: d, mode: mode, in: fx.engine)
            let atOnce = performsLoneMessageAtOnce(mode)
            XCTAssertEqual(try fx.tick(obj, 7, at: 0), atOnce ? 70 : 0, "\(mode)")
            if atOnce {
                XCTAssertEqual(fx.hits, [hit(7, 0)], "\(mode)")
                XCTAssertNil(rule.pendingInvocation, "\(mode)")
                XCTAssertEqual(fx.clock.scheduledCount, 0, "\(mode): nothing held, no timer")
            } else {
                XCTAssertEqual(fx.hits, [], "\(mode)")
                XCTAssertEqual(try rule.pendingInvocation?.argument(at: 0, as: Int.self), 7, "\(mode)")
            }
            fx.advance(to: 10_000)
            XCTAssertEqual(fx.hits, [hit(7, atOnce ? 0 : 100)], "\(mode): once, never twice")
            XCTAssertNil(rule.pendingInvocation, "\(mode)")
        }
    }

    // MARK: - firstly

    func testFirstlyBurstAndWindowBoundary() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, mode: .firstly, in: fx.engine)
        let sends = [(1, 0), (2, 30), (3, 60), (4, 90), (5, 100), (6, 150), (7, 200), (8, 260)]
        var returns: [Int] = []
        for (arg, ms) in sends { returns.append(try fx.tick(obj, arg, at: ms)) }
        fx.advance(to: 1000)
        // 100 and 200 are exactly one window after the last performed message: new windows.
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(5, 100), hit(7, 200)])
        XCTAssertEqual(returns, [10, 0, 0, 0, 50, 0, 70, 0])
        XCTAssertNil(rule.pendingInvocation)
        XCTAssertEqual(fx.clock.scheduledCount, 0, "firstly never arms a timer")
    }

    // MARK: - last

    func testLastPerformsTheLastCallOfEachWindowWithItsArguments() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        try obj.limit("tick:", oncePer: d, mode: .last, in: fx.engine)
        var returns: [Int] = []
        for (arg, ms) in [(1, 0), (2, 30), (3, 60), (4, 90), (5, 100), (6, 150)] {
            returns.append(try fx.tick(obj, arg, at: ms))
        }
        XCTAssertEqual(returns, [0, 0, 0, 0, 0, 0], "every call is deferred")
        fx.advance(to: 199)
        // The message at exactly 100 belongs to the second window: the first closed first.
        XCTAssertEqual(fx.hits, [hit(4, 100)])
        fx.advance(to: 200)
        XCTAssertEqual(fx.hits, [hit(4, 100), hit(6, 200)])
        // A window only opens with a message.
        try fx.tick(obj, 7, at: 250)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(4, 100), hit(6, 200), hit(7, 350)])
    }

    // MARK: - debounce

    func testDebounceWaitsForQuietAndCarriesTheLastArguments() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        try obj.limit("tick:", oncePer: d, mode: .debounce, in: fx.engine)
        for ms in stride(from: 0, through: 90, by: 10) { XCTAssertEqual(try fx.tick(obj, ms + 1, at: ms), 0) }
        fx.advance(to: 189)
        XCTAssertEqual(fx.hits, [])
        fx.advance(to: 190)
        XCTAssertEqual(fx.hits, [hit(91, 190)])
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(91, 190)])
    }

    func testDebounceAtTheBoundary() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        try obj.limit("tick:", oncePer: d, mode: .debounce, in: fx.engine)
        try fx.tick(obj, 1, at: 0)
        try fx.tick(obj, 2, at: 100) // exactly d later: the deadline runs first
        try fx.tick(obj, 3, at: 299) // 1 ms short of the quiet period after 2
        try fx.tick(obj, 4, at: 300)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(1, 100), hit(2, 200), hit(4, 400)])
    }

    // MARK: - debounceMaxWait

    func testDebounceMaxWaitUnderContinuousCalls() throws {
        // d = 50, maxWait = 100; a call every 10 ms from 0 to 490 (argument = time + 1).
        let fx = try makeFixture()
        let obj = try fx.instance()
        try obj.limit("tick:", oncePer: .milliseconds(50), mode: .debounceMaxWait(.milliseconds(100)), in: fx.engine)
        for ms in stride(from: 0, through: 490, by: 10) { XCTAssertEqual(try fx.tick(obj, ms + 1, at: ms), 0) }
        fx.advance(to: 2000)
        XCTAssertEqual(fx.hits, [hit(91, 100), hit(191, 200), hit(291, 300), hit(391, 400), hit(491, 500)])

        // The same stream without maxWait performs once, after the stream ends.
        let plain = try makeFixture()
        let other = try plain.instance()
        try other.limit("tick:", oncePer: .milliseconds(50), mode: .debounce, in: plain.engine)
        for ms in stride(from: 0, through: 490, by: 10) { try plain.tick(other, ms + 1, at: ms) }
        plain.advance(to: 2000)
        XCTAssertEqual(plain.hits, [hit(491, 540)])
    }

    func testDebounceMaxWaitMatchesTheDocumentedTimeline() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        try obj.limit("tick:", oncePer: .milliseconds(50), mode: .debounceMaxWait(.milliseconds(100)), in: fx.engine)
        for ms in stride(from: 0, through: 200, by: 10) { try fx.tick(obj, ms, at: ms) }
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(90, 100), hit(190, 200), hit(200, 250)])
    }

    // MARK: - throttle

    func testThrottleLeadingAndTrailing() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        try obj.limit("tick:", oncePer: d, mode: .throttle(leading: true, trailing: true), in: fx.engine)
        var returns: [Int] = []
        for ms in stride(from: 0, through: 90, by: 10) { returns.append(try fx.tick(obj, ms + 1, at: ms)) }
        XCTAssertEqual(returns, [10] + Array(repeating: 0, count: 9), "the leading call is performed at once")
        fx.advance(to: 200)
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(91, 100)], "the trailing call carries the last arguments")
        // A lone call fires once: on the leading edge, with no trailing repeat.
        XCTAssertEqual(try fx.tick(obj, 301, at: 300), 3010)
        fx.advance(to: 2000)
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(91, 100), hit(301, 300)])
        XCTAssertEqual(fx.clock.scheduledCount, 0)
    }

    func testThrottleAfterATrailingFireStartsANewWindowLikeLodash() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        try obj.limit("tick:", oncePer: d, mode: .throttle(leading: true, trailing: true), in: fx.engine)
        try fx.tick(obj, 1, at: 0)
        try fx.tick(obj, 51, at: 50)
        try fx.tick(obj, 121, at: 120)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(51, 100), hit(121, 220)])
    }

    func testThrottleLeadingOnly() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        try obj.limit("tick:", oncePer: d, mode: .throttle(leading: true, trailing: false), in: fx.engine)
        var returns: [Int] = []
        for ms in stride(from: 0, through: 100, by: 10) { returns.append(try fx.tick(obj, ms + 1, at: ms)) }
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(101, 100)], "the call at exactly 100 opens the next window")
        XCTAssertEqual(returns, [10] + Array(repeating: 0, count: 9) + [1010])
        XCTAssertEqual(fx.clock.scheduledCount, 0, "never holds, never arms a timer")
    }

    func testThrottleTrailingOnly() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        try obj.limit("tick:", oncePer: d, mode: .throttle(leading: false, trailing: true), in: fx.engine)
        for ms in stride(from: 0, through: 90, by: 10) { XCTAssertEqual(try fx.tick(obj, ms + 1, at: ms), 0) }
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(91, 100)])
    }

    func testThrottleWithNeitherEdgeDropsEverything() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        try obj.limit("tick:", oncePer: d, mode: .throttle(leading: false, trailing: false), in: fx.engine)
        for ms in stride(from: 0, through: 500, by: 50) { XCTAssertEqual(try fx.tick(obj, ms + 1, at: ms), 0) }
        fx.advance(to: 2000)
        XCTAssertEqual(fx.hits, [])
    }

    // MARK: - cooldown

    func testCooldownRejectsWithTheRejectedArguments() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, mode: .cooldown, in: fx.engine)
        let rejected = Locked<[Int]>([])
        let rejectedTargets = Locked<[ObjectRef]>([])
        rule.onReject = { inv in
            rejected.withLock { $0.append((try? inv.argument(at: 0, as: Int.self)) ?? -1) }
            rejectedTargets.withLock { $0.append(inv.target) }
            XCTAssertEqual(inv.selector, "tick:")
        }
        var returns: [Int] = []
        for (arg, ms) in [(1, 0), (2, 10), (3, 50), (4, 99), (5, 100), (6, 150), (7, 230)] {
            returns.append(try fx.tick(obj, arg, at: ms))
        }
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(5, 100), hit(7, 230)])
        XCTAssertEqual(rejected.current, [2, 3, 4, 6])
        XCTAssertEqual(rejectedTargets.current, Array(repeating: obj.ref, count: 4))
        XCTAssertEqual(returns, [10, 0, 0, 0, 50, 0, 70])
    }

    func testCooldownRejectsRightAwayOnTheSendingThread() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, mode: .cooldown, in: fx.engine)
        let sender = pthread_self()
        let calls = Locked(0)
        rule.onReject = { _ in
            XCTAssertTrue(pthread_equal(pthread_self(), sender) != 0)
            calls.withLock { $0 += 1 }
        }
        try fx.tick(obj, 1, at: 0)
        try fx.tick(obj, 2, at: 1)
        XCTAssertEqual(calls.current, 1, "reported before the send returns")
    }

    // MARK: - zero and negative durations

    func testZeroAndNegativeDurationsPerformEveryCallAtOnce() throws {
        for duration in [Duration.zero, .milliseconds(-50)] {
            for mode in allEngineModes {
                let fx = try makeFixture()
                let obj = try fx.instance()
                let rule = try obj.limit("tick:", oncePer: duration, mode: mode, in: fx.engine)
                let rejected = Locked(0)
                rule.onReject = { _ in rejected.withLock { $0 += 1 } }
                var returns: [Int] = []
                for i in 1...4 { returns.append(try fx.tick(obj, i, at: 0)) }   // same instant
                for i in 5...6 { returns.append(try fx.tick(obj, i, at: i)) }  // 1 ms apart
                XCTAssertEqual(returns, [10, 20, 30, 40, 50, 60], "\(mode) \(duration)")
                XCTAssertEqual(fx.hits.map(\.arg), [1, 2, 3, 4, 5, 6], "\(mode) \(duration)")
                XCTAssertNil(rule.pendingInvocation, "\(mode) \(duration)")
                XCTAssertEqual(fx.clock.scheduledCount, 0, "\(mode) \(duration)")
                XCTAssertEqual(rejected.current, 0, "\(mode) \(duration): cooldown rejects nothing")
                fx.advance(to: 1000)
                XCTAssertEqual(fx.hits.count, 6, "\(mode) \(duration)")
            }
        }
    }

    // MARK: - the default mode

    func testTheDefaultModeIsDebounce() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, in: fx.engine)
        XCTAssertEqual(rule.mode, .debounce)
        try fx.tick(obj, 1, at: 0)
        try fx.tick(obj, 2, at: 50)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(2, 150)])
    }
}
