/// The modes whose window is measured from the last performance (or acceptance): firstly,
/// cooldown, delayedCooldown and throttleSincePerformed.
extension LimiterStateMachine {
    /// firstly, cooldown and delayedCooldown: performed (or accepted) unless cooling; while
    /// cooling dropped (firstly) or rejected (the cooldowns).
    mutating func judgeCooling(
        _ make: () -> Payload, at now: ThrottleInstant, _ action: inout Action
    ) -> Limiter<Payload>.Verdict {
        history.lastCall = now
        var accepted = history.lastInvoke.map { now.isAtLeast(active.span, after: $0) } ?? true
        if active.delay != nil, case .delayedCooldown(_, let token?) = active.mode {
            accepted = token.begin(at: now, for: active.duration)
        }
        guard accepted else {
            if case .firstly = active.mode {} else { action.reject = make() }
            return .dropped
        }
        history.lastInvoke = now
        guard let delay = active.delay, delay.atLeast > 0 else { return .performNow }
        // Only a reset token lets a message in while an earlier one waits: perform that first.
        if held != nil { closeWindow(at: now, &action) }
        state = .open(start: now)
        held = make()
        return .deferred
    }

    /// RxSwift `throttle(latest: true)`: performed at once `d` after the last performance;
    /// sooner, held (the latest, or the window's first) and performed when the window ends.
    mutating func judgeSincePerformed(
        latest: Bool, _ make: () -> Payload, at now: ThrottleInstant, _ action: inout Action
    ) -> Limiter<Payload>.Verdict {
        history.lastCall = now
        guard let last = history.lastInvoke, !now.isAtLeast(active.span, after: last) else {
            history.lastInvoke = now
            return .performNow
        }
        // The window began at the last performance: its edge is `last + d`.
        if case .idle = state { state = .open(start: last) }
        if held != nil, !latest { return .dropped }
        return hold(make(), at: now, &action)
    }
}
