/// Runs delayed work in Swift tasks that sleep on any `Clock` measured in `Duration`
/// (`ContinuousClock`, `SuspendingClock`, a test clock…): the engine's alternative to
/// Dispatch, with no adapter to write.
///
/// Each scheduled piece of work is a `Task` that sleeps until its deadline and then runs it;
/// cancelling it cancels the task (the sleep throws, the work never runs). Work runs on the
/// global concurrent executor, so two rules' delayed messages may run at once (one limiter never
/// has two timers). Instants are measured from the moment the executor was made: limiters that
/// compare instants (a shared ``CooldownToken``) must share one executor.
public struct ClockTaskExecutor<C: Clock>: ThrottleExecutor where C.Duration == Duration {
    /// The clock the tasks sleep on.
    public let base: C
    /// The priority of the tasks; nil inherits none (the default priority).
    public let priority: TaskPriority?
    private let origin: C.Instant

    /// An executor whose tasks sleep on `clock`, at `priority`.
    public init(clock: C, priority: TaskPriority? = nil) {
        base = clock
        self.priority = priority
        origin = clock.now
    }

    /// `base`'s time, as nanoseconds since this executor was made.
    public var clock: any ThrottleClock { ClockReading(base: base, origin: origin) }

    /// Runs `work` in a new task.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        Task(priority: priority) { work() }
    }

    /// Runs `work` in a task that first sleeps on `base` until `deadline`.
    public func schedule(at deadline: ThrottleInstant, _ work: @escaping @Sendable () -> Void) -> any ThrottleCancellable {
        let wake = origin.advanced(by: .nanoseconds(deadline.nanoseconds))
        let base = base
        let task = Task(priority: priority) {
            do {
                try await base.sleep(until: wake, tolerance: nil)
            } catch {
                return  // cancelled
            }
            work()
        }
        return TaskCancellable(task: task)
    }
}

/// A `Clock`'s time as a ``ThrottleClock``: nanoseconds since `origin`.
struct ClockReading<C: Clock>: ThrottleClock where C.Duration == Duration {
    let base: C
    let origin: C.Instant

    var now: ThrottleInstant {
        ThrottleInstant(nanoseconds: origin.duration(to: base.now).saturatingNanoseconds)
    }
}

/// Cancels a task.
struct TaskCancellable: ThrottleCancellable {
    let task: Task<Void, Never>

    func cancel() { task.cancel() }
}
