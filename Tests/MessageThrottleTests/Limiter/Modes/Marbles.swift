import TestSupport
import MessageThrottle
import XCTest

/// Marble timelines in the notation of docs/modes.md, driven through a real `Limiter` on a
/// `ManualClock`.
///
/// Input: one character per tick; `-` is a quiet tick, any other character a message whose
/// payload is that character. Output: one frame per tick, `-` when nothing happened, else
/// what happened in that tick, in order: `!` the message performed at once, `x` dropped, `R`
/// rejected, `^c` payload `c` performed later by the limiter; several in one tick are grouped
/// as `(^a!)`. A deferred message shows nothing at its own tick. The output runs until the
/// last thing performed (at least as long as the input).
///
/// ```
/// debounce, d = 3 ticks:  "a-b-c-------"  →  "-------^c"
/// ```
func marbles(_ input: String, _ mode: ThrottleMode, every tick: Int = 10, duration: Int,
             horizon: Int = 100) -> String {
    marbleRun(input, mode, every: tick, duration: duration, horizon: horizon).timeline
}

/// `marbles`, also returning the harness it ran on, for what a timeline does not show (timers
/// scheduled, payloads released or rejected; a message's payload id is its tick).
func marbleRun(_ input: String, _ mode: ThrottleMode, every tick: Int = 10, duration: Int,
               horizon: Int = 100) -> (timeline: String, harness: Harness) {
    let h = Harness(mode, .milliseconds(duration))
    let chars = Array(input)
    var frames: [[String]] = Array(repeating: [], count: chars.count + horizon)
    var seen = 0, rejectedSeen = 0
    /// Appends the limiter's performances since the last look to their ticks.
    func collect() {
        let fires = h.fires
        for fire in fires[seen...] where fire.via == .limiter {
            XCTAssertEqual(fire.ms % tick, 0, "a performance between ticks: \(fire)")
            frames[fire.ms / tick].append("^" + String(chars[fire.id]))
        }
        seen = fires.count
    }
    for i in 0..<frames.count {
        h.advance(to: i * tick)
        collect()
        guard i < chars.count, chars[i] != "-" else { continue }
        let outcome = h.deliver(h.probe(i))
        collect()
        let rejected = h.tracker.rejected.count
        switch outcome {
        case .now: frames[i].append("!"); seen = h.fires.count
        case .dropped: frames[i].append(rejected > rejectedSeen ? "R" : "x")
        case .deferred: break
        }
        rejectedSeen = rejected
    }
    let end = max(chars.count, (frames.lastIndex { !$0.isEmpty } ?? -1) + 1)
    return (frames[..<end].map { $0.isEmpty ? "-" : $0.count == 1 ? $0[0] : "(" + $0.joined() + ")" }.joined(), h)
}

/// Asserts that `input` in `mode` gives `expected` (see ``marbles(_:_:every:duration:horizon:)``).
/// Returns the harness it ran on, for further checks.
@discardableResult
func assertMarbles(_ input: String, _ mode: ThrottleMode, duration: Int, every tick: Int = 10,
                   _ expected: String, file: StaticString = #filePath, line: UInt = #line) -> Harness {
    let run = marbleRun(input, mode, every: tick, duration: duration)
    XCTAssertEqual(run.timeline, expected,
                   "\(mode), d = \(duration)ms, a tick = \(tick)ms: \(input)", file: file, line: line)
    return run.harness
}
