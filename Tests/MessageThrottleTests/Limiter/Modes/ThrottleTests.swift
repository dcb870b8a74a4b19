import TestSupport
import MessageThrottle
import XCTest

final class ThrottleTests: XCTestCase {
    let both = ThrottleMode.throttle(leading: true, trailing: true)

    func testLeadingAndTrailingWithOneCallFiresOnce() {
        let h = Harness(both, .milliseconds(100))
        XCTAssertEqual(h.send(1, at: 0), .now)
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [now(1, 0)])
        XCTAssertEqual(h.schedules, 0, "nothing held, so no timer")
    }

    func testTrailingCallCarriesTheLastPayload() {
        let h = assertMarbles("abcdefghij", both, duration: 100,
                              "!---------^j")
        XCTAssertEqual(h.schedules, 1)
    }

    func testAfterATrailingFireTheNextCallOpensAWindowLikeLodash() {
        let h = Harness(both, .milliseconds(100))
        h.send(0, at: 0)
        h.send(50, at: 50)
        h.advance(to: 100) // trailing fire
        XCTAssertEqual(h.send(120, at: 120), .deferred, "within `wait` of the trailing fire: no leading edge")
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [now(0, 0), held(50, 100), held(120, 220)])
    }

    func testMaxWaitElapsedInsideAWindowPerformsAtOnceLikeLodash() {
        let h = Harness(both, .milliseconds(100))
        h.send(0, at: 0)
        h.send(50, at: 50)
        h.send(120, at: 120) // window [120, 220) after the trailing fire at 100
        XCTAssertEqual(h.send(200, at: 200), .now, "100ms since the last performance")
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [now(0, 0), held(50, 100), now(200, 200)])
        XCTAssertTrue(h.tracker.released.contains(120), "the superseded payload is dropped")
    }

    func testBoundaryIsInclusive() {
        let h = Harness(both, .milliseconds(100))
        h.send(0, at: 0)
        XCTAssertEqual(h.send(100, at: 100), .now, "a call exactly `duration` later is a new leading edge")
        h.send(199, at: 199)
        h.advance(to: 1000)
        XCTAssertEqual(h.fires, [now(0, 0), now(100, 100), held(199, 200)])
    }

    func testLeadingOnly() {
        let h = assertMarbles("abcdefghijk----l", .throttle(leading: true, trailing: false), duration: 100,
                              "!xxxxxxxxx!----x")
        XCTAssertEqual(h.schedules, 0)
        XCTAssertEqual(h.tracker.released.count, 12)
    }

    func testTrailingOnly() {
        assertMarbles("abcdefghij", .throttle(leading: false, trailing: true), duration: 100,
                      "----------^j")
    }

    func testNeitherEdgeDropsEverything() {
        // Messages at 0, 50, 100 and 300.
        let h = assertMarbles("a----b----c-------------------d", .throttle(leading: false, trailing: false), duration: 100,
                              "x----x----x-------------------x")
        XCTAssertEqual(h.tracker.released.count, 4)
    }

    func testZeroAndNegativeDuration() {
        for duration in [Duration.zero, .seconds(-1)] {
            let h = Harness(both, duration)
            XCTAssertEqual(h.send(1, at: 0), .now)
            XCTAssertEqual(h.send(2, at: 0), .now)
            XCTAssertEqual(h.fires, [now(1, 0), now(2, 0)])
        }
    }

    /// lodash: `throttle(f, wait, { leading: false })` is `debounce(f, wait, { maxWait: wait })`.
    func testTrailingOnlyThrottleEqualsDebounceWithMaxWaitEqualToWait() {
        var generator = SplitMix(seed: 42)
        for _ in 0..<50 {
            let times = randomTimes(&generator, count: 40)
            let a = Harness(.throttle(leading: false, trailing: true), .milliseconds(100))
            let b = Harness(.debounceMaxWait(.milliseconds(100)), .milliseconds(100))
            for (id, ms) in times.enumerated() {
                a.send(id, at: ms)
                b.send(id, at: ms)
            }
            a.advance(to: times.last! + 1000)
            b.advance(to: times.last! + 1000)
            XCTAssertEqual(a.fires, b.fires, "times: \(times)")
        }
    }

    /// Differential test against a model of lodash's timer chain
    /// (a timer that re-checks and re-arms itself), for every option set.
    func testMatchesLodashTimerChainModel() {
        var generator = SplitMix(seed: 7)
        let wait = 100
        let options: [(ThrottleMode, leading: Bool, trailing: Bool, maxWait: Int?)] = [
            (.debounce, false, true, nil),
            (.debounceMaxWait(.milliseconds(250)), false, true, 250),
            (.debounceMaxWait(.milliseconds(30)), false, true, 100),
            (.throttle(leading: true, trailing: true), true, true, wait),
            (.throttle(leading: true, trailing: false), true, false, wait),
            (.throttle(leading: false, trailing: true), false, true, wait),
            (.throttle(leading: false, trailing: false), false, false, wait),
        ]
        for option in options {
            for _ in 0..<60 {
                let times = randomTimes(&generator, count: 40)
                let h = Harness(option.0, .milliseconds(wait))
                let model = LodashModel(wait: wait, maxWait: option.maxWait, leading: option.leading, trailing: option.trailing)
                for (id, ms) in times.enumerated() {
                    h.send(id, at: ms)
                    model.call(id, at: ms)
                }
                h.advance(to: times.last! + 2000)
                model.clock.advance(to: instant(ms: times.last! + 2000))
                XCTAssertEqual(h.fires, model.fires, "\(option.0) times: \(times)")
                XCTAssertEqual(h.tracker.released.count, times.count, "every payload released")
            }
        }
    }
}

/// Increasing call times with gaps chosen around the interesting boundaries.
func randomTimes(_ generator: inout SplitMix, count: Int) -> [Int] {
    let gaps = [0, 1, 5, 10, 10, 10, 30, 49, 50, 51, 99, 100, 101, 150, 199, 200, 250, 400]
    var t = 0
    var times: [Int] = []
    for _ in 0..<count {
        times.append(t)
        t += gaps[Int(generator.next() % UInt64(gaps.count))]
    }
    return times
}

struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// An independent model of lodash `debounce(func, wait, options)` written as
/// its timer chain: a single live timer that, when it expires, either fires
/// the trailing edge or re-arms for the remaining wait. Time in ms.
final class LodashModel: @unchecked Sendable {
    let clock = ManualClock()
    let wait: Int
    let maxWait: Int?
    let leading: Bool
    let trailing: Bool
    private(set) var fires: [Fire] = []
    private var lastCall: Int?
    private var lastInvoke: Int?
    private var lastArg: Int?
    private var timerLive = false
    private var generation = 0

    init(wait: Int, maxWait: Int?, leading: Bool, trailing: Bool) {
        self.wait = wait
        self.maxWait = maxWait.map { max($0, wait) }
        self.leading = leading
        self.trailing = trailing
    }

    private var nowMs: Int { milliseconds(clock.now) }

    private func due(_ t: Int) -> Bool {
        guard let lastCall else { return true }
        if t - lastCall >= wait { return true }
        guard let maxWait else { return false }
        guard let lastInvoke else { return true }
        return t - lastInvoke >= maxWait
    }

    private func invoke(_ t: Int, _ via: Via) {
        fires.append(Fire(id: lastArg!, ms: t, via: via))
        lastArg = nil
        lastInvoke = t
    }

    private func arm(_ delay: Int) {
        generation += 1
        let mine = generation
        timerLive = true
        _ = ManualExecutor(clock: clock).schedule(after: .milliseconds(delay)) { [self] in
            if mine == generation { expire() }
        }
    }

    private func expire() {
        let t = nowMs
        if due(t) {
            timerLive = false
            if trailing, lastArg != nil { invoke(t, .limiter) }
            lastArg = nil
            return
        }
        var remaining = wait - (t - lastCall!)
        if let maxWait, let lastInvoke { remaining = min(remaining, maxWait - (t - lastInvoke)) }
        arm(remaining)
    }

    func call(_ id: Int, at ms: Int) {
        clock.advance(to: instant(ms: ms))
        let t = nowMs
        let invoking = due(t)
        lastArg = id
        lastCall = t
        if invoking, !timerLive {
            lastInvoke = t
            arm(wait)
            if leading { invoke(t, .caller) }
            return
        }
        if invoking, maxWait != nil {
            arm(wait)
            invoke(t, .caller)
            return
        }
        if !timerLive { arm(wait) }
    }
}
