import DynamicRuntime

/// `ManualClock` is a `Clock`: generic code (`sleep(for:)`, `measure`, an engine taking any
/// clock) runs on it in virtual time. A sleeping task resumes during the ``advance(to:)`` that
/// reaches its deadline, in deadline order with the clock's other work.
extension ManualClock: Clock {
    /// The smallest step: one nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Suspends until an advance reaches `deadline` (at once if it has been reached).
    ///
    /// - Throws: `CancellationError` when the task is cancelled first; the wake-up is then
    ///   removed from the timeline.
    public func sleep(until deadline: ThrottleInstant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        if deadline <= now { return }
        let sleeper = Sleeper()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                sleeper.start(continuation, on: self, until: deadline)
            }
        } onCancel: {
            sleeper.cancel(on: self)
        }
    }
}

/// One sleeping task: its continuation and its entry on the timeline. Resumed exactly once,
/// by the wake-up or by cancellation, whichever takes the state first.
private final class Sleeper: @unchecked Sendable {
    private enum State {
        case starting
        case sleeping(CheckedContinuation<Void, any Error>, entry: UInt64)
        case cancelled
        case woken
    }

    // Taken before the clock's lock when starting; never held while resuming.
    private let state = Locked(State.starting)

    func start(_ continuation: CheckedContinuation<Void, any Error>, on clock: ManualClock,
               until deadline: ThrottleInstant) {
        let cancelled = state.withLock { s -> Bool in
            guard case .starting = s else { return true }
            // The wake-up cannot run before the state is set: it takes this lock first.
            let entry = clock.schedule(at: deadline) { [self] in wake() }
            s = .sleeping(continuation, entry: entry)
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
    }

    private func wake() {
        let continuation = state.withLock { s -> CheckedContinuation<Void, any Error>? in
            guard case let .sleeping(c, _) = s else { return nil }
            s = .woken
            return c
        }
        continuation?.resume()
    }

    func cancel(on clock: ManualClock) {
        let sleeping = state.withLock { s -> (CheckedContinuation<Void, any Error>, UInt64)? in
            switch s {
            case let .sleeping(c, entry):
                s = .cancelled
                return (c, entry)
            case .starting:
                s = .cancelled
                return nil
            case .cancelled, .woken:
                return nil
            }
        }
        guard let (continuation, entry) = sleeping else { return }
        clock.cancel(entry)
        continuation.resume(throwing: CancellationError())
    }
}
