extension Engine {
    /// An engine whose delayed messages are timed by `clock`: any `Clock` measured in
    /// `Duration`. A ``ManualClock`` runs them on its virtual timeline, during its advances
    /// (``ManualExecutor``); any other clock in tasks sleeping on it (``ClockTaskExecutor``).
    public convenience init<C: Clock>(clock: C) where C.Duration == Duration {
        self.init(executor: Engine.executor(for: clock))
    }

    /// The executor ``init(clock:)`` uses for `clock`.
    public static func executor<C: Clock>(for clock: C) -> any ThrottleExecutor where C.Duration == Duration {
        if let manual = clock as? ManualClock { return ManualExecutor(clock: manual) }
        return ClockTaskExecutor(clock: clock)
    }
}
