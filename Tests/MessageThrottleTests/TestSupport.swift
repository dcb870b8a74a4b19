import TestSupport
import Foundation
import MessageThrottle
import XCTest

/// A payload that reports its own release.
final class Probe: @unchecked Sendable, CustomStringConvertible {
    let id: Int
    private let onRelease: (@Sendable (Int) -> Void)?

    init(_ id: Int, onRelease: (@Sendable (Int) -> Void)? = nil) {
        self.id = id
        self.onRelease = onRelease
    }

    deinit { onRelease?(id) }

    var description: String { "Probe(\(id))" }
}

/// How a payload got performed.
enum Via: Equatable, CustomStringConvertible {
    /// `receive` returned `.performNow` and the caller performed it.
    case caller
    /// The limiter called `perform` (timer, flush, or catch-up).
    case limiter

    var description: String { self == .caller ? "now" : "held" }
}

/// One performance on the virtual timeline.
struct Fire: Equatable, CustomStringConvertible {
    var id: Int
    var ms: Int
    var via: Via

    var description: String { "\(id)@\(ms)\(via == .caller ? "!" : "")" }
}

/// Performed at once by the caller.
func now(_ id: Int, _ ms: Int) -> Fire { Fire(id: id, ms: ms, via: .caller) }
/// Performed by the limiter (held, then performed).
func held(_ id: Int, _ ms: Int) -> Fire { Fire(id: id, ms: ms, via: .limiter) }

/// The outcome of `receive`, without the payload.
enum Outcome: Equatable {
    case now, dropped, deferred
}

/// Thread-safe record of what happened to probes.
final class Tracker: @unchecked Sendable {
    private let lock = NSLock()
    private var _fires: [Fire] = []
    private var _rejected: [Int] = []
    private var _released: [Int] = []
    private var _performCounts: [Int: Int] = [:]
    private var _schedules = 0

    func fire(_ fire: Fire) {
        lock.withLock {
            _fires.append(fire)
            _performCounts[fire.id, default: 0] += 1
        }
    }

    func reject(_ id: Int) { lock.withLock { _rejected.append(id) } }
    func release(_ id: Int) { lock.withLock { _released.append(id) } }
    func schedule() { lock.withLock { _schedules += 1 } }

    var fires: [Fire] { lock.withLock { _fires } }
    var rejected: [Int] { lock.withLock { _rejected } }
    var released: [Int] { lock.withLock { _released } }
    var performCounts: [Int: Int] { lock.withLock { _performCounts } }
    var schedules: Int { lock.withLock { _schedules } }
}

func milliseconds(_ instant: ThrottleInstant) -> Int {
    Int(instant.nanoseconds / 1_000_000)
}

func instant(ms: Int) -> ThrottleInstant {
    .zero + .milliseconds(ms)
}

/// A limiter on a virtual clock, fed with `Probe`s and recording everything.
final class Harness: @unchecked Sendable {
    let clock = ManualClock()
    let tracker = Tracker()
    private(set) var limiter: Limiter<Probe>!

    init(_ mode: ThrottleMode, _ duration: Duration) {
        let clock = clock
        let tracker = tracker
        let executor = CountingExecutor(base: ManualExecutor(clock: clock)) { tracker.schedule() }
        limiter = Limiter(
            mode: mode,
            duration: duration,
            executor: executor,
            perform: { probe in
                tracker.fire(Fire(id: probe.id, ms: milliseconds(clock.now), via: .limiter))
            },
            reject: { probe in tracker.reject(probe.id) }
        )
    }

    func probe(_ id: Int) -> Probe {
        let tracker = tracker
        return Probe(id) { tracker.release($0) }
    }

    /// Advances the clock to `ms` (running due work), then sends probe `id`.
    @discardableResult
    func send(_ id: Int, at ms: Int) -> Outcome {
        clock.advance(to: instant(ms: ms))
        return deliver(probe(id))
    }

    /// Sends a probe at the current time, performing a `.performNow` like a caller would.
    @discardableResult
    func deliver(_ probe: Probe) -> Outcome {
        switch limiter.receive(probe) {
        case .performNow(let payload):
            tracker.fire(Fire(id: payload.id, ms: milliseconds(clock.now), via: .caller))
            return .now
        case .dropped:
            return .dropped
        case .deferred:
            return .deferred
        }
    }

    func advance(to ms: Int) {
        clock.advance(to: instant(ms: ms))
    }

    var fires: [Fire] { tracker.fires }

    /// How many timers the limiter has scheduled so far.
    var schedules: Int { tracker.schedules }
}

/// Wraps an executor to count `schedule` calls.
struct CountingExecutor: ThrottleExecutor {
    let base: any ThrottleExecutor
    let onSchedule: @Sendable () -> Void

    init(base: any ThrottleExecutor, onSchedule: @escaping @Sendable () -> Void) {
        self.base = base
        self.onSchedule = onSchedule
    }

    var clock: any ThrottleClock { base.clock }

    func execute(_ work: @escaping @Sendable () -> Void) { base.execute(work) }

    func schedule(at deadline: ThrottleInstant, _ work: @escaping @Sendable () -> Void) -> any ThrottleCancellable {
        onSchedule()
        return base.schedule(at: deadline, work)
    }
}
