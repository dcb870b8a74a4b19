import DynamicRuntime
import Synchronization

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
    /// `Timeline.current`, written under the lock and read without it: limiters read the clock
    /// on every message.
    private let currentNanoseconds: Atomic<Int64>

    /// Creates a clock reading `now`.
    public init(now: ThrottleInstant = .zero) {
        timeline = Locked(Timeline(current: now))
        currentNanoseconds = Atomic(now.nanoseconds)
    }

    /// The current virtual instant.
    public var now: ThrottleInstant {
        ThrottleInstant(nanoseconds: currentNanoseconds.load(ordering: .acquiring))
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
            if $0.current < target {
                $0.current = target
                currentNanoseconds.store(target.nanoseconds, ordering: .releasing)
            }
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
            if t.current < first.deadline {
                t.current = first.deadline
                currentNanoseconds.store(first.deadline.nanoseconds, ordering: .releasing)
            }
            return first.work
        }
    }
}
