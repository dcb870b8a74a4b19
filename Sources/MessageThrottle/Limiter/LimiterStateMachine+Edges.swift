/// The modes with a leading and a trailing edge, all lodash `debounce` with some options:
/// debounce, debounceMaxWait, throttle and leadingDebounce. Their windows are measured from the
/// last message (and, with `maxWait`, from the last performance).
extension LimiterStateMachine {
    /// When the open window closes under the active rules; nil when Idle.
    @inline(__always)
    func windowEdge() -> ThrottleInstant? {
        guard let start = windowStart else { return nil }
        let d = active.span.whole
        if let delay = active.delay { return start.adding(delay.whole) }
        guard let rule = active.edges else { return start.adding(d) }
        // lodash: no earlier than the first timer check, then when quiet for `wait` or
        // `maxWait` after the last invoke, whichever comes first.
        var due = (history.lastCall ?? start).adding(d)
        if let maxWait = rule.maxWait, let invoked = history.lastInvoke {
            due = min(due, invoked.adding(maxWait.whole))
        }
        return max(start.adding(d), due)
    }

    /// lodash `debounced(…)`: `shouldInvoke`, then the leading edge, the "tight loop" branch
    /// of `maxWait`, or a trailing edge to wait for.
    mutating func judgeEdges(
        _ make: () -> Payload, at now: ThrottleInstant, _ action: inout Action
    ) -> Limiter<Payload>.Verdict {
        let d = active.span
        let rule = active.edges!
        // lodash shouldInvoke: first call, quiet for `wait`, or `maxWait` since the last invoke.
        var isInvoking = history.lastCall.map { now.isAtLeast(d, after: $0) } ?? true
        if !isInvoking, let maxWait = rule.maxWait {
            isInvoking = history.lastInvoke.map { now.isAtLeast(maxWait, after: $0) } ?? true
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
