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

/// The open window in which a message only replaces the held payload (and moves `lastCall`):
/// the limiter swaps payloads without taking its lock (`Limiter+Replacing.swift`).
extension LimiterStateMachine {
    /// When the window replaces: a message judged at `j` (no earlier than the last call `l`)
    /// replaces the held payload while `j < max(fixed, l + follow)` (no `follow`: `j < fixed`).
    struct ReplaceWindow: Equatable {
        var fixed: ThrottleInstant
        var follow: Int64?
    }

    /// `last` and `throttleSincePerformed(latest: true)` (their edge is fixed) and `debounce`
    /// (its edge follows the last call), with a window open, a payload held, a timer armed no
    /// later than the edge, no edit waiting: a message before the edge settles nothing, is
    /// judged into `hold`, and `rearm` keeps the timer. nil otherwise.
    @inline(__always)
    var replaceWindow: ReplaceWindow? {
        guard held != nil, case .open(let start) = state, let armed, active.limits, !edited,
              let edge = windowEdge(), armed <= edge else { return nil }
        switch active.mode {
        case .last:
            return ReplaceWindow(fixed: edge, follow: nil)
        case .throttleSincePerformed(latest: true):
            // Opened at the last performance; before its edge, `!isAtLeast(d, after: start)`.
            guard history.lastInvoke == start else { return nil }
            return ReplaceWindow(fixed: edge, follow: nil)
        case .debounce:
            guard history.lastCall != nil else { return nil }
            return ReplaceWindow(fixed: start.adding(active.span.whole), follow: active.span.whole)
        default:
            return nil
        }
    }
}
