import TestSupport
@testable import MessageThrottle
import XCTest

/// Drives a `LimiterStateMachine` alone in virtual time: no executor, no clock, no lock. The
/// timer the machine asks for fires when time reaches its deadline, before a message at the
/// same instant (the tie rule), and everything the machine hands back is logged as marks:
/// `3!@0` performed at once, `^3@100` performed later, `x3@10` dropped, `R3@10` rejected,
/// `-3@10` released unperformed.
struct MachineRun {
    typealias Machine = LimiterStateMachine<Int>

    var machine: Machine
    private(set) var now = 0
    /// The timer the machine armed: deadline (ms) and id.
    private(set) var timer: (ms: Int, id: UInt64)?
    private(set) var marks: [String] = []
    /// Timers armed so far.
    private(set) var arms = 0
    /// Payloads the machine asked to be made.
    private(set) var made: [Int] = []

    init(_ mode: ThrottleMode, _ ms: Int) {
        machine = Machine(mode: mode, duration: .milliseconds(ms))
    }

    /// Moves time to `ms`, firing the armed timer (and the ones it re-arms) on the way.
    mutating func advance(to ms: Int) {
        while let t = timer, t.ms <= ms {
            now = t.ms
            carryOut(machine.timerFired(t.id, at: instant(ms: t.ms)))
        }
        now = max(now, ms)
    }

    /// Sends payload `id` at `ms` and returns the verdict.
    @discardableResult
    mutating func send(_ id: Int, at ms: Int) -> Limiter<Int>.Verdict {
        advance(to: ms)
        let (verdict, action) = machine.messageArrived(at: instant(ms: ms)) { made.append(id); return id }
        carryOut(action)
        switch verdict {
        case .performNow: marks.append("\(id)!@\(ms)")
        case .dropped where action.reject == nil: marks.append("x\(id)@\(ms)")
        case .dropped, .deferred: break
        }
        return verdict
    }

    /// Sends one payload per entry, each named after its time.
    mutating func send(at times: [Int]) {
        for ms in times { send(ms, at: ms) }
    }

    mutating func flush(at ms: Int) -> Bool {
        advance(to: ms)
        let action = machine.flush(at: instant(ms: ms))
        let performed = action.perform != nil
        carryOut(action)
        return performed
    }

    mutating func cancel(at ms: Int) {
        advance(to: ms)
        carryOut(machine.cancel())
    }

    private mutating func carryOut(_ action: Machine.Action) {
        if let p = action.perform { marks.append("^\(p)@\(now)") }
        if let p = action.reject { marks.append("R\(p)@\(now)") }
        if let p = action.release { marks.append("-\(p)@\(now)") }
        switch action.timer {
        case .keep:
            break
        case .disarm:
            XCTAssertNotNil(timer, "disarmed a timer that was not armed")
            timer = nil
        case let .arm(deadline, id):
            XCTAssertGreaterThanOrEqual(deadline, instant(ms: now), "armed in the past")
            timer = (milliseconds(deadline), id)
            arms += 1
        }
    }

    /// Whether the machine is Idle.
    var isIdle: Bool {
        if case .idle = machine.state { return true }
        return false
    }
}

/// One random sequence of 60 steps (messages, clock moves, duration and mode edits, flushes,
/// cancels) applied to `limiter` and to `run`, the bare machine, alike. `send` sends message
/// `id` through the limiter and describes its verdict. Returns both verdict lists, described
/// (a `Limiter<P>.Verdict` is a type per payload), and the steps as a log for failure messages.
func replayRandomSteps<P>(_ limiter: Limiter<P>, _ run: inout MachineRun, clock: ManualClock, rng: inout SplitMix,
                          durations: [Int], send: (Int) -> String) -> (verdicts: [String], expected: [String], log: [String]) {
    let modes = LimiterStateMachineEventTests.modes
    var ms = 0, verdicts: [String] = [], expected: [String] = [], log: [String] = []
    for id in 0..<60 {
        switch rng.next() % 20 {
        case 0:
            let d = Duration.milliseconds(durations[Int(rng.next() % UInt64(durations.count))])
            limiter.duration = d
            run.machine.setDuration(d)
            log.append("d=\(d)")
        case 1:
            let m = modes[Int(rng.next() % UInt64(modes.count))]
            limiter.mode = m
            run.machine.setMode(m)
            log.append("\(m)")
        case 2:
            XCTAssertEqual(limiter.flush(), run.flush(at: ms), "flush at \(ms): \(log)")
            log.append("flush")
        case 3:
            limiter.cancel()
            run.cancel(at: ms)
            log.append("cancel")
        case 4...9:
            ms += Int(rng.next() % 60)
            clock.advance(to: instant(ms: ms))
            run.advance(to: ms)
        default:
            verdicts.append(send(id))
            expected.append(String(describing: run.send(id, at: ms)))
            log.append("\(id)@\(ms)")
        }
    }
    return (verdicts, expected, log)
}

extension MachineRun {
    /// The payloads performed after their message (timer, flush), in order.
    var performedLater: [Int] { ids(marked: "^") }
    /// The payloads rejected, in order.
    var rejectedPayloads: [Int] { ids(marked: "R") }

    private func ids(marked prefix: Character) -> [Int] {
        marks.filter { $0.first == prefix }.map { Int($0.dropFirst().prefix { $0 != "@" })! }
    }
}
