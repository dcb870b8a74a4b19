/// The window in which a message changes nothing but its own fate: the limiter drops it without
/// taking its lock (`Limiter.receive(making:)`).
extension LimiterStateMachine {
    /// The instant before which an arriving message is dropped and leaves the machine as it
    /// is, or nil when every message must run the machine. Only `firstly` has one: cooling since
    /// the last performance, nothing held, no timer armed, no edit waiting to be adopted. (The
    /// message's arrival would only update `History.lastCall`, which firstly never reads, and
    /// which a mode change resets.)
    var quietUntil: ThrottleInstant? {
        // Cheapest tests first: this runs after every event of every mode.
        guard case .firstly = active.mode, held == nil, armed == nil, case .idle = state,
              let last = history.lastInvoke, active.duration > .zero, requested == active else { return nil }
        return last + active.duration
    }
}
