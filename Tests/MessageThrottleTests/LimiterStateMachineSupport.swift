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
