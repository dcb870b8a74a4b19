import Dispatch

/// A handle to scheduled work that can be cancelled.
public protocol ThrottleCancellable: Sendable {
    /// Prevents the work from running if it has not started yet.
    /// Idempotent; a no-op once the work has run.
    func cancel()
}

/// Where and when a ``Limiter`` runs its delayed work.
///
/// The executor owns the clock its deadlines refer to (``clock``), so a
/// limiter's time readings and its timers always agree.
///
/// Contract for implementations: `execute` and `schedule` must never run
/// `work` synchronously inside the call (the limiter schedules while holding
/// its lock), and `cancel` must never run it either.
public protocol ThrottleExecutor: Sendable {
    /// The clock that ``schedule(at:_:)`` deadlines are measured on.
    var clock: any ThrottleClock { get }

    /// Runs `work` as soon as possible, asynchronously.
    func execute(_ work: @escaping @Sendable () -> Void)

    /// Runs `work` once ``clock`` reaches `deadline` (at once, asynchronously,
    /// if it already has).
    func schedule(at deadline: ThrottleInstant, _ work: @escaping @Sendable () -> Void) -> any ThrottleCancellable
}

extension ThrottleExecutor {
    /// Runs `work` once `delay` has passed on ``clock``.
    public func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) -> any ThrottleCancellable {
        schedule(at: clock.now + delay, work)
    }
}

/// Runs work on a `DispatchQueue`, timed by ``MonotonicClock``.
public struct DispatchQueueExecutor: ThrottleExecutor {
    /// The serial queue used when none is given.
    ///
    /// (MessageThrottle defaults to the main queue; that queue is not drained
    /// on Linux without `dispatchMain()`, so a private serial queue is used.)
    public static let defaultQueue = DispatchQueue(label: "MessageThrottle.default")

    /// The queue work runs on.
    public let queue: DispatchQueue

    /// Creates an executor for `queue`.
    public init(queue: DispatchQueue = DispatchQueueExecutor.defaultQueue) {
        self.queue = queue
    }

    /// The monotonic clock `asyncAfter(deadline:)` uses.
    public var clock: any ThrottleClock { MonotonicClock() }

    /// Submits `work` to ``queue``.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Submits `work` to ``queue`` at `deadline`.
    public func schedule(at deadline: ThrottleInstant, _ work: @escaping @Sendable () -> Void) -> any ThrottleCancellable {
        let item = DispatchWorkItem(block: work)
        // uptimeNanoseconds 0 means "now" to Dispatch, which is what a past deadline needs anyway.
        let time = DispatchTime(uptimeNanoseconds: UInt64(max(deadline.nanoseconds, 0)))
        queue.asyncAfter(deadline: time, execute: item)
        return DispatchCancellable(item: item)
    }
}

/// Cancels a `DispatchWorkItem`.
struct DispatchCancellable: ThrottleCancellable, @unchecked Sendable {
    // DispatchWorkItem is thread-safe; it is just not annotated Sendable here.
    let item: DispatchWorkItem

    func cancel() { item.cancel() }
}

/// Runs work on a ``ManualClock``'s virtual timeline.
///
/// Scheduled work runs when the clock is advanced past its deadline, in
/// deadline order, FIFO for equal deadlines, on the advancing thread.
/// Several executors may share one clock; they share its timeline.
public struct ManualExecutor: ThrottleExecutor {
    /// The virtual clock this executor is bound to.
    public let manualClock: ManualClock

    /// Creates an executor bound to `clock`.
    public init(clock: ManualClock) {
        manualClock = clock
    }

    /// The bound ``ManualClock``.
    public var clock: any ThrottleClock { manualClock }

    /// Runs `work` at the current virtual instant, i.e. during the next
    /// advance (`advance(by: .zero)` suffices), after work already due.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        _ = manualClock.schedule(at: manualClock.now, work)
    }

    /// Runs `work` when the clock is advanced to `deadline` or later.
    public func schedule(at deadline: ThrottleInstant, _ work: @escaping @Sendable () -> Void) -> any ThrottleCancellable {
        ManualCancellable(clock: manualClock, sequence: manualClock.schedule(at: deadline, work))
    }
}

/// Cancels work scheduled on a ``ManualClock``.
struct ManualCancellable: ThrottleCancellable {
    let clock: ManualClock
    let sequence: UInt64

    func cancel() { clock.cancel(sequence) }
}
