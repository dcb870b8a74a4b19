/// The window in which a message changes nothing but its own fate: the limiter drops it without
/// taking its lock (`Limiter.receive(making:)`).
extension LimiterStateMachine {
    /// The instant before which an arriving message is dropped and leaves the machine as it
    /// is, or nil when every message must run the machine. Only `firstly` has one: cooling since
    /// the last performance, nothing held, no timer armed, no edit waiting to be adopted. (The
    /// message's arrival would only update `History.lastCall`, which firstly never reads, and
    /// which a mode change resets.)
    @inline(__always)
    var quietUntil: ThrottleInstant? {
        // Cheapest tests first: this runs after every event of every mode.
        guard case .firstly = active.mode, held == nil, armed == nil, case .idle = state,
              let last = history.lastInvoke, active.limits, !edited else { return nil }
        return last.adding(active.span.atLeast)
    }
}

/// The state in which every message is performed at once and changes only the history: the
/// limiter passes messages without taking its lock (`Limiter.passes(at:)`).
extension LimiterStateMachine {
    /// No limiting (a duration of zero or less), nothing held, no timer armed, no window open,
    /// no edit waiting to be adopted.
    @inline(__always)
    var passesEverything: Bool {
        !active.limits && held == nil && armed == nil && windowStart == nil && !edited
    }
}
