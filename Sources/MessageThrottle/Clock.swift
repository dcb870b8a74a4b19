import Dispatch

/// A point on a throttle clock's timeline, in nanoseconds since that clock's
/// (arbitrary) origin.
///
/// Instants from different clocks are not comparable in any meaningful way;
/// a ``Limiter`` only ever compares instants read from its executor's clock.
/// Arithmetic saturates instead of trapping, so "infinitely far" durations
/// (e.g. `.seconds(Int64.max)`) are safe.
public struct ThrottleInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the clock's origin.
    public var nanoseconds: Int64

    /// Creates an instant `nanoseconds` after the clock's origin.
    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// The clock's origin.
    public static let zero = ThrottleInstant(nanoseconds: 0)

    /// The latest representable instant ("never").
    public static let distantFuture = ThrottleInstant(nanoseconds: .max)

    /// Orders instants by their position on the timeline.
    public static func < (lhs: ThrottleInstant, rhs: ThrottleInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// The instant `duration` after `instant` (saturating).
    public static func + (instant: ThrottleInstant, duration: Duration) -> ThrottleInstant {
        ThrottleInstant(nanoseconds: saturatingAdd(instant.nanoseconds, duration.saturatingNanoseconds))
    }

    /// The instant `duration` before `instant` (saturating).
    public static func - (instant: ThrottleInstant, duration: Duration) -> ThrottleInstant {
        let ns = duration.saturatingNanoseconds
        return ThrottleInstant(nanoseconds: saturatingAdd(instant.nanoseconds, ns == .min ? .max : -ns))
    }

    /// The signed time from `rhs` to `lhs` (`lhs - rhs`).
    public static func - (lhs: ThrottleInstant, rhs: ThrottleInstant) -> Duration {
        let (difference, overflow) = lhs.nanoseconds.subtractingReportingOverflow(rhs.nanoseconds)
        if overflow { return lhs > rhs ? .nanoseconds(Int64.max) : .nanoseconds(Int64.min) }
        return .nanoseconds(difference)
    }

    /// Moves the instant `duration` later (saturating).
    public static func += (instant: inout ThrottleInstant, duration: Duration) {
        instant = instant + duration
    }

    /// The signed time from `self` to `other`.
    public func duration(to other: ThrottleInstant) -> Duration {
        other - self
    }

    /// A human-readable form, in milliseconds since the origin.
    public var description: String {
        let ms = Double(nanoseconds) / 1_000_000
        return "t=\(ms)ms"
    }

    private static func saturatingAdd(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        if overflow { return b > 0 ? .max : .min }
        return sum
    }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int64`'s range.
    var saturatingNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds > 0 ? .max : .min }
        let (total, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflow2 { return seconds > 0 ? .max : .min }
        return total
    }
}

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

/// A virtual clock for deterministic tests.
///
/// Time only moves when ``advance(by:)`` or ``advance(to:)`` is called. Work
/// scheduled on it (through a ``ManualExecutor``) runs during those calls, in
/// deadline order (FIFO for equal deadlines), on the advancing thread, with
/// ``now`` set to the work's deadline while it runs. Work that becomes due
/// while advancing (scheduled by other work) also runs before the call
/// returns.
///
/// Thread-safe: any thread may read ``now``, schedule or cancel work. Work
/// never runs while the clock's internal lock is held, so it may freely use
/// the clock. Concurrent advances are safe (time never goes backwards) but
/// only one advancing thread gives a fully deterministic order.
public final class ManualClock: ThrottleClock, @unchecked Sendable {
    private struct Entry {
        let deadline: ThrottleInstant
        let sequence: UInt64
        let work: @Sendable () -> Void
    }

    private struct Timeline {
        var current: ThrottleInstant
        // Sorted by (deadline, sequence); a test clock holds few entries.
        var entries: [Entry] = []
        var nextSequence: UInt64 = 0
    }

    private let timeline: Locked<Timeline>

    /// Creates a clock reading `now`.
    public init(now: ThrottleInstant = .zero) {
        timeline = Locked(Timeline(current: now))
    }

    /// The current virtual instant.
    public var now: ThrottleInstant {
        timeline.withLock { $0.current }
    }

    /// Work scheduled and not yet run or cancelled.
    public var scheduledCount: Int {
        timeline.withLock { $0.entries.count }
    }

    /// The deadline of the earliest scheduled work, if any.
    public var nextDeadline: ThrottleInstant? {
        timeline.withLock { $0.entries.first?.deadline }
    }

    /// Moves time forward by `duration`, running work that falls due.
    /// A negative duration only runs work that is already due.
    public func advance(by duration: Duration) {
        advance(to: now + duration)
    }

    /// Moves time forward to `target`, running work that falls due on the
    /// way. An earlier `target` does not move time back; it only runs work
    /// that is already due.
    public func advance(to target: ThrottleInstant) {
        while let work = popDue(upTo: target) {
            work()
        }
        timeline.withLock {
            if $0.current < target { $0.current = target }
        }
    }

    /// Schedules `work` to run once the clock reaches `deadline`.
    func schedule(at deadline: ThrottleInstant, _ work: @escaping @Sendable () -> Void) -> UInt64 {
        timeline.withLock { t in
            let sequence = t.nextSequence
            t.nextSequence += 1
            let entry = Entry(deadline: deadline, sequence: sequence, work: work)
            // Insert after every entry with deadline <= this one: FIFO on ties.
            var low = 0
            var high = t.entries.count
            while low < high {
                let mid = (low + high) / 2
                if t.entries[mid].deadline <= deadline { low = mid + 1 } else { high = mid }
            }
            t.entries.insert(entry, at: low)
            return sequence
        }
    }

    /// Removes scheduled work; no effect if it already ran.
    func cancel(_ sequence: UInt64) {
        let removed: Entry? = timeline.withLock { t in
            guard let index = t.entries.firstIndex(where: { $0.sequence == sequence }) else { return nil }
            return t.entries.remove(at: index)
        }
        // The closure (and whatever it captured) is released outside the lock.
        _ = removed
    }

    private func popDue(upTo target: ThrottleInstant) -> (@Sendable () -> Void)? {
        timeline.withLock { t in
            guard let first = t.entries.first, first.deadline <= target else { return nil }
            t.entries.removeFirst()
            if t.current < first.deadline { t.current = first.deadline }
            return first.work
        }
    }
}
