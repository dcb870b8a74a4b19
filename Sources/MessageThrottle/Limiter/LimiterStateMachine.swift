/// The ``Limiter``'s decisions as a value, with the states `docs/modes.md` draws.
///
/// One mutating function per event (a message arrives, a timer fires, flush, cancel, a setter
/// writes); each returns an ``Action`` for the limiter to carry out. The machine performs,
/// releases and schedules nothing itself, so every mode and edge case is testable without an
/// executor or a clock.
///
/// The mode-specific rules (lodash's `shouldInvoke` and `remainingWait`, firstly's and
/// cooldown's `lastPerformed`) read the ``History``, which survives from window to window
/// until ``cancel()`` or a mode change resets it.
struct LimiterStateMachine<Payload> {
    /// The window, when one is open.
    enum State {
        /// No window is open and nothing is held. (For firstly and cooldown, Ready and Cooling
        /// are both Idle: they differ only by ``History/lastInvoke``.)
        case idle
        /// A window opened at `start` (Open in `docs/modes.md`; Waiting for debounce), holding
        /// at most one payload (``held``) to perform at its edge. A window with nothing held (a
        /// leading edge performed, or no trailing edge) has no timer and is closed lazily, by
        /// the next event after its edge.
        case open(start: ThrottleInstant)
    }

    /// The instants the rules measure from.
    struct History: Equatable {
        /// The latest received message.
        var lastCall: ThrottleInstant?
        /// The latest performance (lodash also sets it at a leading edge that performs
        /// nothing); firstly's and cooldown's `lastPerformed`.
        var lastInvoke: ThrottleInstant?
    }

    /// What the limiter must do about the one timer it keeps.
    enum TimerChange: Equatable {
        /// Leave it as it is (armed no later than needed, or none needed and none armed).
        case keep
        /// Cancel it (or forget it, once it has run): nothing is due.
        case disarm
        /// Replace it by one firing at `deadline`, which reports `id` back to ``timerFired(_:at:)``.
        case arm(at: ThrottleInstant, id: UInt64)
    }

    /// What an event asks of the limiter. Payloads are handed over after the lock is released
    /// (performed, then rejected, then released) so that they may call back into the limiter;
    /// the timer change is made under the lock, in decision order (executors never run work
    /// inside `schedule`, see ``ThrottleExecutor``).
    struct Action {
        /// A held payload whose time has come, to perform now on the calling thread.
        var perform: Payload?
        /// This message's payload, rejected by cooldown.
        var reject: Payload?
        /// A payload let go of without being performed (replaced, or cancelled).
        var release: Payload?
        /// The timer to keep, cancel or arm.
        var timer: TimerChange = .keep
    }

    /// What the setters wrote; adopted by the next message.
    private(set) var requested: Config
    /// What the rules run.
    private(set) var active: Config
    /// Whether a setter wrote since the last adoption (so a message compares the configs, with
    /// their modes' payloads, only then).
    private(set) var edited = false
    var state: State = .idle
    /// The payload waiting for the open window's edge; nil whenever the state is Idle. Beside
    /// the state rather than in its case: replacing it is then a move (`take()`), where an
    /// enum payload is copied out and released (measured 8% slower on a captured call).
    var held: Payload?
    var history = History()
    /// The deadline of the armed timer, if one is armed.
    private(set) var armed: ThrottleInstant?
    private var timerID: UInt64 = 0

    init(mode: ThrottleMode, duration: Duration) {
        requested = Config(mode: mode, duration: duration)
        active = requested
    }

    // MARK: - Queries

    /// When the open window began; nil when Idle.
    // The queries are inlined: called out of line, the machine (a few hundred bytes) is copied
    // for each call.
    @inline(__always)
    var windowStart: ThrottleInstant? {
        if case .open(let start) = state { return start }
        return nil
    }

    /// When the held payload is due under the rules in force, if one is held.
    @inline(__always)
    var pendingDeadline: ThrottleInstant? {
        guard held != nil else { return nil }
        return windowEdge()
    }

    /// lodash `pending()`: whether a window is open at `now` (a timer would be armed in
    /// lodash), including after a leading edge that holds nothing; for the modes that measure
    /// from the last performance (firstly, cooldown, throttleSincePerformed), while cooling.
    func isPending(at now: ThrottleInstant) -> Bool {
        if held != nil { return true }
        guard active.limits else { return false }
        let cooling = history.lastInvoke.map { !now.isAtLeast(active.span, after: $0) } ?? false
        switch active.mode {
        case .firstly, .cooldown, .throttleSincePerformed:
            return cooling
        case .delayedCooldown(_, let token):
            return token?.isCooling(at: now) ?? cooling
        case .last, .debounce, .debounceMaxWait, .throttle, .leadingDebounce:
            return windowEdge().map { $0 > now } ?? false
        }
    }

    // MARK: - Events

    /// A setter wrote a new mode; the next message adopts it.
    mutating func setMode(_ mode: ThrottleMode) {
        requested.mode = mode
        edited = true
    }

    /// A setter wrote a new duration; the next message adopts it.
    mutating func setDuration(_ duration: Duration) {
        requested.duration = duration
        edited = true
    }

    /// A message arrives at `now`: settle the edge that was due, adopt the setters' values,
    /// then judge it. `make` is called only when the payload is kept (held, or rejected).
    mutating func messageArrived(
        at now: ThrottleInstant, making make: () -> Payload
    ) -> (verdict: Limiter<Payload>.Verdict, action: Action) {
        var action = Action()
        settle(at: now, &action)
        if edited {
            edited = false
            if requested != active { adopt(at: now, &action) }
        }
        let verdict = judge(make, at: now, &action)
        action.timer = rearm()
        return (verdict, action)
    }

    /// The timer armed with `id` fires at `now` (it may be stale, or early: it re-checks).
    mutating func timerFired(_ id: UInt64, at now: ThrottleInstant) -> Action {
        let ranOut = id == timerID && armed != nil
        if ranOut { armed = nil }
        var action = Action()
        settle(at: now, &action)
        action.timer = rearm()
        // The limiter still holds the token of the timer that just ran.
        if ranOut, action.timer == .keep { action.timer = .disarm }
        return action
    }

    /// `flush()` at `now`: perform the held payload and close the window (lodash `flush`).
    mutating func flush(at now: ThrottleInstant) -> Action {
        var action = Action()
        settle(at: now, &action)
        if action.perform == nil, windowStart != nil { closeWindow(at: now, &action) }
        action.timer = rearm()
        return action
    }

    /// `cancel()`: drop the held payload and forget the history; the next message is the first.
    mutating func cancel() -> Action {
        var action = Action(release: reset())
        action.timer = rearm()
        return action
    }

    /// AXKit's cancel: drop the held payload and its timer, keep the window and the history
    /// (a cooldown goes on; a message in the still open window is judged as inside it).
    mutating func cancelPending() -> Action {
        var action = Action(release: held.take())
        action.timer = rearm()
        return action
    }

    // MARK: - Transitions

    /// Back to Idle with no history, handing back the held payload.
    private mutating func reset() -> Payload? {
        state = .idle
        history = History()
        return held.take()
    }

    /// Processes a window edge that is due at `now` (a timer, or a late one).
    mutating func settle(at now: ThrottleInstant, _ action: inout Action) {
        guard let edge = windowEdge(), edge <= now else { return }
        closeWindow(at: edge, &action)
    }

    /// The trailing edge: Open → Idle, performing the held payload, if any.
    mutating func closeWindow(at time: ThrottleInstant, _ action: inout Action) {
        state = .idle
        guard let payload = held.take() else { return }
        assert(action.perform == nil, "at most one payload is held")
        // A delayed cooldown cools from the message's arrival, not from its performance.
        if active.delay == nil { history.lastInvoke = time }
        action.perform = payload
    }

    /// Runs the setters' values: a new mode performs the old one's payload and starts Idle; a
    /// new duration re-evaluates the open window.
    private mutating func adopt(at now: ThrottleInstant, _ action: inout Action) {
        if requested.mode != active.mode {
            if let payload = reset() {
                assert(action.perform == nil, "at most one payload is held")
                action.perform = payload
            }
            active = requested
        } else {
            active = requested
            settle(at: now, &action)
        }
    }

    /// Holds `payload` (replacing the held one) in the open window, or opens one at `now`.
    mutating func hold(_ payload: consuming Payload, at now: ThrottleInstant, _ action: inout Action) -> Limiter<Payload>.Verdict {
        if case .idle = state { state = .open(start: now) }
        action.release = held.take()
        held = payload
        return .deferred
    }

    /// Decides this message under the active rules (after the due edge is settled).
    private mutating func judge(
        _ make: () -> Payload, at now: ThrottleInstant, _ action: inout Action
    ) -> Limiter<Payload>.Verdict {
        guard active.limits else {
            // No limiting; settle() has already performed anything held.
            history.lastCall = now
            history.lastInvoke = now
            return .performNow
        }
        switch active.mode {
        case .firstly, .cooldown, .delayedCooldown:
            return judgeCooling(make, at: now, &action)
        case .throttleSincePerformed(let latest):
            return judgeSincePerformed(latest: latest, make, at: now, &action)
        case .last:
            history.lastCall = now
            return hold(make(), at: now, &action)
        case .debounce, .debounceMaxWait, .throttle, .leadingDebounce:
            return judgeEdges(make, at: now, &action)
        }
    }

    /// Keeps exactly one timer armed no later than the held payload's deadline.
    private mutating func rearm() -> TimerChange {
        guard let wanted = pendingDeadline else {
            // Nothing to perform later: a window with nothing held is closed lazily.
            guard armed != nil else { return .keep }
            armed = nil
            return .disarm
        }
        // An earlier timer re-checks when it fires and re-arms then.
        if let armed, armed <= wanted { return .keep }
        timerID &+= 1
        armed = wanted
        return .arm(at: wanted, id: timerID)
    }
}
