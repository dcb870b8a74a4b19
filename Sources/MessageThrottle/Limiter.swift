/// The timing core of a message throttle: decides, for each message received,
/// whether it is performed now, kept to be performed later, or dropped.
///
/// ### Where payloads are performed
/// - Immediate messages are not performed by the limiter: ``receive(_:)``
///   returns ``Decision/performNow(_:)`` and the caller performs the payload
///   synchronously on its own thread.
/// - Delayed messages are performed by calling `perform` on the executor.
/// - Exceptions, both on the calling thread and before `receive`/`flush`
///   returns: ``flush()``; a held payload whose deadline has already passed
///   when the next message arrives (its timer is late), which is performed
///   before the new message is considered so that order is kept; and a held
///   payload closed by a mode change (see "Live edits").
///
/// ### Payload lifetime
/// The limiter holds at most one payload. A payload is released (no longer
/// referenced by the limiter) as soon as it is performed, replaced, dropped,
/// rejected or cancelled. It is never performed twice. In trailing modes the
/// latest payload is never silently lost: it is either performed or replaced
/// by a later one. Releasing, `perform` and `reject` all happen after the
/// internal lock is released, so they may call back into the limiter.
/// Releasing the limiter itself drops its held payload without performing it
/// and cancels its timer; call ``flush()`` first to keep it.
///
/// ### Live edits
/// ``mode`` and ``duration`` may be set at any time from any thread. Setting
/// them changes nothing immediately: a held payload keeps its deadline (its
/// timer is not rescheduled) and is performed then under the old rules. The
/// new values take effect at the next received message, which first settles
/// the old rules up to its arrival time, then:
/// - duration change (same mode): the open window is re-evaluated as if the
///   new duration had applied since it began; if that puts its deadline at or
///   before now, the held payload is performed at once, otherwise its
///   deadline moves;
/// - mode change (any difference, including associated values): the old
///   mode's held payload is performed at once and the limiter restarts idle
///   in the new mode, treating this message as the first one.
///
/// ### Allocation
/// Steady-state messages do not allocate: one timer is kept per window and,
/// like lodash's `remainingWait`, it re-checks and re-arms itself when it
/// fires early instead of being replaced on every message.
public final class Limiter<Payload>: @unchecked Sendable {
    /// What the caller must do with a received message.
    public enum Decision {
        /// Perform the payload now, synchronously, on the calling thread.
        case performNow(Payload)
        /// The payload was dropped (ignored, superseded, or rejected while
        /// cooling down); it will never be performed.
        case dropped
        /// The payload is held to be performed later on the executor; any
        /// payload it replaced was dropped.
        case deferred
    }

    /// A decision made before the payload exists (``receive(making:)``).
    public enum Verdict: Equatable, Sendable {
        /// Perform the message now, synchronously; the limiter kept nothing.
        case performNow
        /// Dropped; it will never be performed.
        case dropped
        /// Held (the payload was made) to be performed later.
        case deferred
    }

    private struct Config: Equatable {
        var mode: ThrottleMode
        var duration: Duration
    }

    /// lodash debounce options for the timer-driven modes.
    private struct EdgeRule {
        var leading: Bool
        var trailing: Bool
        var maxWait: Duration?
    }

    /// Work found under the lock, done after unlocking, in field order.
    private struct Aftermath {
        var perform: Payload?
        var reject: Payload?
        var release: Payload?
    }

    private let lock = ThrottleLock()
    private let executor: any ThrottleExecutor
    private let clock: any ThrottleClock
    private let performAction: @Sendable (Payload) -> Void
    private let rejectAction: (@Sendable (Payload) -> Void)?

    // Everything below is guarded by `lock`.
    /// What the setters wrote.
    private var requested: Config
    /// What the state machine runs; catches up with `requested` per message.
    private var active: Config
    private var held: Payload?
    /// Time of the latest received message.
    private var lastCall: ThrottleInstant?
    /// Time of the latest performance (lodash also sets it at a leading edge
    /// that does not perform).
    private var lastInvoke: ThrottleInstant?
    /// Start of the open window; nil when idle.
    private var windowStart: ThrottleInstant?
    private var timerDeadline: ThrottleInstant?
    private var timerToken: (any ThrottleCancellable)?
    private var timerID: UInt64 = 0

    /// Creates a limiter.
    ///
    /// - Parameters:
    ///   - mode: How messages are thinned out; ``ThrottleMode/debounce`` by default.
    ///   - duration: The window length; zero or less disables limiting.
    ///   - executor: Runs delayed work and supplies the clock.
    ///   - perform: Performs a payload that was held; called on the executor
    ///     (or on the caller's thread, see the type's documentation).
    ///   - reject: Receives payloads rejected by ``ThrottleMode/cooldown``,
    ///     synchronously on the thread that called ``receive(_:)``.
    public init(
        mode: ThrottleMode = .default,
        duration: Duration,
        executor: any ThrottleExecutor = DispatchQueueExecutor(),
        perform: @escaping @Sendable (Payload) -> Void,
        reject: (@Sendable (Payload) -> Void)? = nil
    ) {
        let config = Config(mode: mode, duration: duration)
        requested = config
        active = config
        self.executor = executor
        clock = executor.clock
        performAction = perform
        rejectAction = reject
    }

    deinit {
        timerToken?.cancel()
    }

    /// The mode; a new value takes effect at the next received message.
    public var mode: ThrottleMode {
        get { lock.withLock { requested.mode } }
        set { lock.withLock { requested.mode = newValue } }
    }

    /// The window length; a new value takes effect at the next received
    /// message. Zero or less disables limiting.
    public var duration: Duration {
        get { lock.withLock { requested.duration } }
        set { lock.withLock { requested.duration = newValue } }
    }

    /// The payload held to be performed later, if any. (The returned
    /// reference keeps it alive while the caller holds it.)
    public var pending: Payload? {
        lock.withLock { held }
    }

    /// When the held payload is due under the rules in force, if one is held.
    public var pendingDeadline: ThrottleInstant? {
        lock.withLock { held == nil ? nil : windowEdge() }
    }

    /// Feeds one message to the limiter at the clock's current time.
    ///
    /// A ``Decision/performNow(_:)`` result must be performed by the caller.
    /// Before returning, this may call `perform` for an older payload (late
    /// timer, or mode change) and `reject` for this one (cooldown).
    public func receive(_ payload: Payload) -> Decision {
        switch receive(making: { payload }).verdict {
        case .performNow: .performNow(payload)
        case .dropped: .dropped
        case .deferred: .deferred
        }
    }

    /// Like ``receive(_:)``, but makes the payload only if the limiter keeps it (to perform
    /// later, or to report a cooldown rejection): a message performed now or dropped costs no
    /// payload. `make` runs under the limiter's lock and must not call back into it.
    /// `displaced` is a payload this message replaced, for the caller to reuse.
    public func receive(making make: () -> Payload) -> (verdict: Verdict, displaced: Payload?) {
        var after = Aftermath()
        lock.lock()
        let now = clock.now
        settle(at: now, &after)
        if requested != active { adopt(at: now, &after) }
        let verdict = decide(make, at: now, &after)
        rearm()
        lock.unlock()
        let displaced = after.release.take()
        finish(&after)
        return (verdict, displaced)
    }

    /// Performs the held payload now, synchronously on the calling thread,
    /// and closes the open window (as lodash's `flush`: the next message is
    /// judged against this performance). Returns whether a payload was
    /// performed.
    @discardableResult
    public func flush() -> Bool {
        var after = Aftermath()
        lock.lock()
        let now = clock.now
        settle(at: now, &after)
        if after.perform == nil, windowStart != nil { closeWindow(at: now, &after) }
        rearm()
        lock.unlock()
        let performed = after.perform != nil
        finish(&after)
        return performed
    }

    /// Drops the held payload without performing it, cancels the timer and
    /// resets the limiter to idle: the next message is treated as the first.
    public func cancel() {
        var after = Aftermath()
        lock.lock()
        after.release = held.take()
        windowStart = nil
        lastCall = nil
        lastInvoke = nil
        rearm()
        lock.unlock()
        finish(&after)
    }

    // MARK: - State machine (lock held)

    private static func edgeRule(_ config: Config) -> EdgeRule? {
        switch config.mode {
        case .debounce:
            EdgeRule(leading: false, trailing: true, maxWait: nil)
        case .debounceMaxWait(let maxWait):
            EdgeRule(leading: false, trailing: true, maxWait: max(maxWait, config.duration))
        case .throttle(let leading, let trailing):
            EdgeRule(leading: leading, trailing: trailing, maxWait: config.duration)
        case .firstly, .last, .cooldown:
            nil
        }
    }

    /// When the open window closes under the active rules; nil when idle.
    private func windowEdge() -> ThrottleInstant? {
        guard let start = windowStart else { return nil }
        let d = active.duration
        guard let rule = Self.edgeRule(active) else { return start + d }
        // lodash: no earlier than the first timer check, then when quiet for
        // `wait` or `maxWait` after the last invoke, whichever comes first.
        var due = (lastCall ?? start) + d
        if let maxWait = rule.maxWait, let invoked = lastInvoke {
            due = min(due, invoked + maxWait)
        }
        return max(start + d, due)
    }

    /// Processes a window edge that is due at `now` (a timer, or a late one).
    private func settle(at now: ThrottleInstant, _ after: inout Aftermath) {
        guard let edge = windowEdge(), edge <= now else { return }
        closeWindow(at: edge, &after)
    }

    /// The trailing edge: performs the held payload, if any.
    private func closeWindow(at time: ThrottleInstant, _ after: inout Aftermath) {
        windowStart = nil
        guard let payload = held.take() else { return }
        assert(after.perform == nil, "at most one payload is held")
        lastInvoke = time
        after.perform = payload
    }

    private func adopt(at now: ThrottleInstant, _ after: inout Aftermath) {
        if requested.mode != active.mode {
            // The old mode's payload is performed before the new mode starts idle.
            if let payload = held.take() {
                assert(after.perform == nil, "at most one payload is held")
                after.perform = payload
            }
            windowStart = nil
            lastCall = nil
            lastInvoke = nil
            active = requested
        } else {
            active = requested
            settle(at: now, &after)
        }
    }

    private func decide(_ payload: () -> Payload, at now: ThrottleInstant, _ after: inout Aftermath) -> Verdict {
        let d = active.duration
        guard d > .zero else {
            // No limiting. settle() has already performed anything held.
            lastCall = now
            lastInvoke = now
            return .performNow
        }
        switch active.mode {
        case .firstly, .cooldown:
            lastCall = now
            if let last = lastInvoke, now - last < d {
                if active.mode == .cooldown { after.reject = payload() }
                return .dropped
            }
            lastInvoke = now
            return .performNow

        case .last:
            lastCall = now
            if windowStart == nil { windowStart = now }
            return hold(payload(), &after)

        case .debounce, .debounceMaxWait, .throttle:
            let rule = Self.edgeRule(active)!
            // lodash shouldInvoke: first call, quiet for `wait`, or `maxWait` since the last invoke.
            var isInvoking = lastCall.map { now - $0 >= d } ?? true
            if !isInvoking, let maxWait = rule.maxWait {
                isInvoking = lastInvoke.map { now - $0 >= maxWait } ?? true
            }
            lastCall = now
            if windowStart == nil {
                windowStart = now
                if isInvoking {
                    // Leading edge.
                    lastInvoke = now
                    if rule.leading { return .performNow }
                }
            } else if isInvoking, rule.maxWait != nil {
                // lodash's "tight loop" branch: maxWait has elapsed inside a window
                // that opened without a leading edge; perform now, reopen the window.
                after.release = held.take()
                lastInvoke = now
                windowStart = now
                return .performNow
            }
            if rule.trailing { return hold(payload(), &after) }
            return .dropped
        }
    }

    private func hold(_ payload: Payload, _ after: inout Aftermath) -> Verdict {
        after.release = held.take()
        held = payload
        return .deferred
    }

    /// Keeps exactly one timer armed no later than the held payload's deadline.
    private func rearm() {
        guard held != nil, let wanted = windowEdge() else {
            // Nothing to perform later: a window without a held payload is closed lazily.
            timerToken?.cancel()
            timerToken = nil
            timerDeadline = nil
            return
        }
        // An earlier timer re-checks when it fires and re-arms then.
        if let armed = timerDeadline, armed <= wanted { return }
        timerToken?.cancel()
        timerID &+= 1
        let id = timerID
        timerDeadline = wanted
        timerToken = executor.schedule(at: wanted) { [weak self] in
            self?.timerFired(id)
        }
    }

    private func timerFired(_ id: UInt64) {
        var after = Aftermath()
        lock.lock()
        if id == timerID {
            timerToken = nil
            timerDeadline = nil
        }
        settle(at: clock.now, &after)
        rearm()
        lock.unlock()
        finish(&after)
    }

    // MARK: - Outside the lock

    /// Performs, rejects, then releases, emptying `after`.
    private func finish(_ after: inout Aftermath) {
        if let payload = after.perform.take() { performAction(payload) }
        if let payload = after.reject.take() { rejectAction?(payload) }
        after.release = nil
    }
}

extension Limiter.Decision: Sendable where Payload: Sendable {}
