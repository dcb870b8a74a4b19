import DynamicRuntime

/// The events besides messages: flush, cancel, cancel the pending payload.
extension Limiter {
    /// Performs the held payload now, synchronously on the calling thread,
    /// and closes the open window (as lodash's `flush`: the next message is
    /// judged against this performance). Returns whether a payload was
    /// performed.
    @discardableResult
    public func flush() -> Bool {
        let now = self.now
        var action = locked { s in
            if s.latest < now { s.latest = now }
            let action = s.machine.flush(at: s.latest)
            changeTimer(action.timer, &s)
            return action
        }
        let performed = action.perform != nil
        carryOut(&action)
        return performed
    }

    /// Drops the held payload without performing it, cancels the timer and
    /// resets the limiter to idle: the next message is treated as the first.
    public func cancel() {
        var action = locked { s in
            let action = s.machine.cancel()
            changeTimer(action.timer, &s)
            return action
        }
        carryOut(&action)
    }

    /// Drops the held payload without performing it and cancels its timer, keeping everything
    /// else (AXKit's cancel): a cooldown goes on, an open window stays open.
    public func cancelPending() {
        var action = locked { s in
            let action = s.machine.cancelPending()
            changeTimer(action.timer, &s)
            return action
        }
        carryOut(&action)
    }
}
