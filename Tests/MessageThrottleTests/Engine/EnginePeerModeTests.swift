import TestSupport
import XCTest
@testable import DynamicRuntime
@testable import MessageThrottle

/// The peers' modes through the engine: real classes, hooks and sends, in virtual time.
/// `tick:` returns `arg * 10` when performed at once; a dropped or deferred call returns 0.
final class EnginePeerModeTests: XCTestCase {
    private let d = Duration.milliseconds(100)

    func testLeadingDebounceThroughARule() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: .milliseconds(32), mode: .leadingDebounce(), in: fx.engine)
        var returns: [Int] = []
        for (i, ms) in stride(from: 0, through: 190, by: 10).enumerated() {
            returns.append(try fx.tick(obj, i + 1, at: ms))
        }
        XCTAssertTrue(rule.isPending)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(20, 222)])
        XCTAssertEqual(returns, [10] + Array(repeating: 0, count: 19))
        XCTAssertFalse(rule.isPending)
    }

    func testCallSitesSharingACooldownToken() throws {
        // AXKit: two call sites (two objects' rules) share one token.
        let fx = try makeFixture()
        let (a, b) = (try fx.instance(), try fx.instance())
        let token = CooldownToken(name: "reload")
        let ruleA = try a.limit("tick:", oncePer: d, mode: .delayedCooldown(delay: .zero, token: token), in: fx.engine)
        let ruleB = try b.limit("tick:", oncePer: d, mode: .delayedCooldown(delay: .milliseconds(20), token: token),
                                in: fx.engine)
        let rejected = Locked<[Int]>([])
        for rule in [ruleA, ruleB] {
            rule.onReject = { inv in rejected.withLock { $0.append((try? inv.argument(at: 0, as: Int.self)) ?? -1) } }
        }
        XCTAssertEqual(try fx.tick(a, 1, at: 0), 10)
        XCTAssertEqual(try fx.tick(b, 2, at: 10), 0, "B cools with A")
        XCTAssertTrue(ruleB.isPending, "B's own history is empty; the shared token is cooling")
        XCTAssertEqual(try fx.tick(b, 3, at: 100), 0, "accepted, delayed 20 ms")
        XCTAssertEqual(try fx.tick(a, 4, at: 150), 0)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(3, 120)])
        XCTAssertEqual(rejected.current, [2, 4])
    }

    func testCancellingTheDelayedCallKeepsTheCooldown() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        let rule = try obj.limit("tick:", oncePer: d, mode: .delayedCooldown(delay: .milliseconds(30)), in: fx.engine)
        XCTAssertEqual(try fx.tick(obj, 1, at: 0), 0)
        XCTAssertEqual(try rule.pendingInvocation?.argument(at: 0, as: Int.self), 1)
        fx.advance(to: 10)
        rule.cancelPending()
        XCTAssertNil(rule.pendingInvocation)
        XCTAssertTrue(rule.isPending, "still cooling")
        XCTAssertEqual(try fx.tick(obj, 2, at: 50), 0)
        XCTAssertEqual(try fx.tick(obj, 3, at: 100), 0)
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(3, 130)], "the cancelled call never ran; the cooldown ended at 100")
    }

    func testThrottleSincePerformedThroughARule() throws {
        let fx = try makeFixture()
        let obj = try fx.instance()
        try obj.limit("tick:", oncePer: d, mode: .throttleSincePerformed(latest: false), in: fx.engine)
        for (arg, ms) in [(1, 0), (2, 10), (3, 20), (4, 150)] { _ = try fx.tick(obj, arg, at: ms) }
        fx.advance(to: 1000)
        XCTAssertEqual(fx.hits, [hit(1, 0), hit(2, 100), hit(4, 200)], "the window's first call, from the last run")
    }
}
