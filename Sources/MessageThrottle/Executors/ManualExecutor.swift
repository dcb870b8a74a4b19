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
