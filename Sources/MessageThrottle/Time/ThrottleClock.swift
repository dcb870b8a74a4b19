import Dispatch

/// A source of monotonic time for a ``Limiter``.
///
/// A clock is always paired with a ``ThrottleExecutor`` (see
/// ``ThrottleExecutor/clock``) so that deadlines computed from `now` are
/// understood by the executor that schedules them.
public protocol ThrottleClock: Sendable {
    /// The current instant. Never decreases.
    var now: ThrottleInstant { get }
}

/// The real monotonic clock: `DispatchTime`'s uptime base.
///
/// That is `CLOCK_MONOTONIC` on Linux (`mach_absolute_time` on Darwin), the
/// same time base `DispatchQueue.asyncAfter(deadline:)` uses, so deadlines
/// read from this clock and handed to Dispatch agree exactly. It is not
/// affected by wall-clock changes.
public struct MonotonicClock: ThrottleClock {
    /// Creates the monotonic clock (it has no state).
    public init() {}

    /// The current monotonic time.
    public var now: ThrottleInstant {
        ThrottleInstant(nanoseconds: Int64(clamping: DispatchTime.now().uptimeNanoseconds))
    }
}

/// How a limiter reads its clock: the package's own clocks directly, any other through the
/// protocol.
enum ClockAccess {
    /// Unretained: the limiter holds the clock.
    case manual(ObjectWord<ManualClock>)
    case monotonic
    case other

    init(_ clock: any ThrottleClock) {
        if let manual = clock as? ManualClock {
            self = .manual(ObjectWord(unretained: manual))
        } else if clock is MonotonicClock {
            self = .monotonic
        } else {
            self = .other
        }
    }
}
