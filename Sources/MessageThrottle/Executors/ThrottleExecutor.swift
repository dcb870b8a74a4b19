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
