/// The modes whose window is measured from the last performance (or acceptance): firstly,
/// cooldown, delayedCooldown and throttleSincePerformed.
extension LimiterStateMachine {
    /// firstly, cooldown and delayedCooldown: performed (or accepted) unless cooling; while
    /// cooling dropped (firstly) or rejected (the cooldowns).
    mutating func judgeCooling(
        _ make: () -> Payload, at now: ThrottleInstant, _ action: inout Action
    ) -> Limiter<Payload>.Verdict {
        let d = active.duration
        history.lastCall = now
        var delay = Duration.zero
        var accepted = history.lastInvoke.map { now - $0 >= d } ?? true
        if case .delayedCooldown(let wanted, let token) = active.mode {
            delay = min(wanted, d)
            if let token { accepted = token.begin(at: now, for: d) }
        }
        guard accepted else {
            if active.mode != .firstly { action.reject = make() }
            return .dropped
        }
        history.lastInvoke = now
        guard delay > .zero else { return .performNow }
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
        guard let last = history.lastInvoke, now - last < active.duration else {
            history.lastInvoke = now
            return .performNow
        }
        // The window began at the last performance: its edge is `last + d`.
        if case .idle = state { state = .open(start: last) }
        if held != nil, !latest { return .dropped }
        return hold(make(), at: now, &action)
    }
}
