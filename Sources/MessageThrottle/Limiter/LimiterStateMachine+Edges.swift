/// The modes with a leading and a trailing edge, all lodash `debounce` with some options:
/// debounce, debounceMaxWait, throttle and leadingDebounce. Their windows are measured from the
/// last message (and, with `maxWait`, from the last performance).
extension LimiterStateMachine {
    /// lodash debounce options for the modes with edges; nil for the other modes.
    static func edgeRule(_ config: Config) -> (leading: Bool, trailing: Bool, maxWait: Duration?)? {
        switch config.mode {
        case .debounce:
            (leading: false, trailing: true, maxWait: nil)
        case .debounceMaxWait(let maxWait):
            (leading: false, trailing: true, maxWait: max(maxWait, config.duration))
        case .throttle(let leading, let trailing):
            (leading: leading, trailing: trailing, maxWait: config.duration)
        case .leadingDebounce(let trailing, let maxWait):
            (leading: true, trailing: trailing, maxWait: maxWait.map { max($0, config.duration) })
        case .firstly, .last, .cooldown, .throttleSincePerformed, .delayedCooldown:
            nil
        }
    }

    /// When the open window closes under the active rules; nil when Idle.
    func windowEdge() -> ThrottleInstant? {
        guard let start = windowStart else { return nil }
        let d = active.duration
        if case .delayedCooldown(let delay, _) = active.mode {
            return start + min(max(delay, .zero), d)
        }
        guard let rule = Self.edgeRule(active) else { return start + d }
        // lodash: no earlier than the first timer check, then when quiet for `wait` or
        // `maxWait` after the last invoke, whichever comes first.
        var due = (history.lastCall ?? start) + d
        if let maxWait = rule.maxWait, let invoked = history.lastInvoke {
            due = min(due, invoked + maxWait)
        }
        return max(start + d, due)
    }

    /// lodash `debounced(…)`: `shouldInvoke`, then the leading edge, the "tight loop" branch
    /// of `maxWait`, or a trailing edge to wait for.
    mutating func judgeEdges(
        _ make: () -> Payload, at now: ThrottleInstant, _ action: inout Action
    ) -> Limiter<Payload>.Verdict {
        let d = active.duration
        let rule = Self.edgeRule(active)!
        // lodash shouldInvoke: first call, quiet for `wait`, or `maxWait` since the last invoke.
        var isInvoking = history.lastCall.map { now - $0 >= d } ?? true
        if !isInvoking, let maxWait = rule.maxWait {
            isInvoking = history.lastInvoke.map { now - $0 >= maxWait } ?? true
        }
        history.lastCall = now
        switch state {
        case .idle:
            state = .open(start: now)
            if isInvoking {
                // Leading edge.
                history.lastInvoke = now
                if rule.leading { return .performNow }
            }
        case .open:
            if isInvoking, rule.maxWait != nil {
                // lodash's "tight loop" branch: maxWait has elapsed inside a window that
                // opened without a leading edge; perform now, reopen the window.
                action.release = held.take()
                history.lastInvoke = now
                state = .open(start: now)
                return .performNow
            }
        }
        if rule.trailing { return hold(make(), at: now, &action) }
        return .dropped
    }
}
