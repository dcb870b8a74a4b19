import DynamicRuntime
import Synchronization

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

    typealias Machine = LimiterStateMachine<Payload>

    /// The machine and the token of the one timer it keeps armed.
    struct Storage {
        var machine: Machine
        var timer: (any ThrottleCancellable)?
        /// The latest instant a message was judged at: the clock is read before the lock, so a
        /// thread that read it earlier may arrive later; it is judged at this instant instead.
        var latest = ThrottleInstant(nanoseconds: .min)
        /// What `passedAt` held when it was last published (`Int64.min`: not published).
        var passPublished = Int64.min
        /// Whether the held payload is in `slot` (`Limiter+Replacing.swift`).
        var slotPublished = false
        /// Counts the slot's publications (its low 15 bits tag the slot's word).
        var slotGeneration: UInt64 = 0
    }

    let storage: Locked<Storage>
    /// Nanoseconds before which a message is dropped with nothing to record (firstly, cooling,
    /// nothing held or armed, no edit waiting); `Int64.min` when no message may skip the lock.
    /// Written under the lock after every event, read by `receive` without it.
    let quietUntil = Atomic<Int64>(.min)
    /// While the machine performs every message at once (no limiting, nothing held, no timer,
    /// no edit waiting, its history at the latest instant): that instant, in nanoseconds, moved
    /// on by the messages that pass without the lock; `Int64.min` when messages take the lock.
    /// Every event under the lock takes it back first and folds it into the machine.
    let passedAt = Atomic<Int64>(.min)
    /// The held payload and `lastCall` while the machine's window only replaces the payload
    /// (`Limiter+Replacing.swift`).
    let slot = ReplacingSlot<Payload>()
    /// The window's edge while `slot` is published: `replaceFixed`, or no earlier than the last
    /// call plus `replaceFollow` (`Int64.min`: fixed); and the latest instant when it was
    /// published. Written before the slot is published.
    let replaceFixed = Atomic<Int64>(.min)
    let replaceFollow = Atomic<Int64>(.min)
    let replaceLatest = Atomic<Int64>(.min)
    /// Whether payloads can move through `slot` (one reference wide).
    let movesAsWord: Bool
    private let executor: any ThrottleExecutor
    let clock: any ThrottleClock
    /// How `now` reads `clock` without copying the existential (a retain and a release of the
    /// clock per message).
    private let reading: ClockAccess
    private let performAction: @Sendable (Payload) -> Void
    let rejectAction: (@Sendable (Payload) -> Void)?

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
        storage = Locked(Storage(machine: Machine(mode: mode, duration: duration)))
        self.executor = executor
        clock = executor.clock
        reading = ClockAccess(clock)
        performAction = perform
        rejectAction = reject
        movesAsWord = ReplacingSlot<Payload>.carries()
    }

    deinit {
        storage.withLock { $0.timer?.cancel() }
        // Released here, outside the lock, like every payload.
        _ = slot.drain()
    }

    /// The mode; a new value takes effect at the next received message.
    public var mode: ThrottleMode {
        get { storage.withLock { $0.machine.requested.mode } }
        set { locked { $0.machine.setMode(newValue) } }
    }

    /// The window length; a new value takes effect at the next received
    /// message. Zero or less disables limiting.
    public var duration: Duration {
        get { storage.withLock { $0.machine.requested.duration } }
        set { locked { $0.machine.setDuration(newValue) } }
    }

    /// The payload held to be performed later, if any. (The returned
    /// reference keeps it alive while the caller holds it.)
    public var pending: Payload? {
        locked { $0.machine.held }
    }

    /// When the held payload is due under the rules in force, if one is held.
    public var pendingDeadline: ThrottleInstant? {
        locked { $0.machine.pendingDeadline }
    }

    /// Whether a window is open at the clock's current time (lodash `pending()`): a payload is
    /// held, or a leading edge was performed and its window has not ended, or (for the modes
    /// measured from the last performance) the limiter is cooling.
    public var isPending: Bool {
        let now = self.now
        return locked { $0.machine.isPending(at: max(now, $0.latest)) }
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
    /// payload. `make` may run under the limiter's lock and must not call back into it.
    /// `displaced` is a payload this message replaced, or this message's own payload once
    /// `reject` has had it (or once made, if the limiter did not keep it after all), for the
    /// caller to reuse.
    // Inlined so that the engine's call (Payload == Invocation) runs specialized code: in
    // generic code every access to the machine goes through value witnesses.
    @inline(__always)
    public func receive(making make: () -> Payload) -> (verdict: Verdict, displaced: Payload?) {
        let now = self.now
        if let verdict = shortcut(at: now) { return (verdict, nil) }
        return receiveKept(at: now, making: make)
    }

    /// What a message at `now` gets without the lock, if that is all it needs: dropped inside
    /// a quiet window, performed when the limiter lets everything pass; nil otherwise (then
    /// `receiveKept`). The clock is read by the caller, outside the lock.
    @inline(__always)
    func shortcut(at now: ThrottleInstant) -> Verdict? {
        if now.nanoseconds < quietUntil.load(ordering: .acquiring) { return .dropped }
        if passes(at: now) { return .performNow }
        return nil
    }

    /// The clock's current instant.
    @inline(__always)
    var now: ThrottleInstant {
        switch reading {
        case .manual(let manual): manual.withObject { $0.now }
        case .monotonic: MonotonicClock().now
        case .other: clock.now
        }
    }

    private func timerFired(_ id: UInt64) {
        let now = self.now
        var action = locked { s in
            if s.latest < now { s.latest = now }
            let action = s.machine.timerFired(id, at: s.latest)
            changeTimer(action.timer, &s)
            return action
        }
        carryOut(&action)
    }

    /// Runs an event on the machine under the lock: first takes back what messages that passed
    /// or replaced without it recorded, then publishes the shortcuts the machine leaves (quiet,
    /// passing, replacing).
    @inline(__always)
    func locked<R>(_ body: (inout Storage) -> R) -> R {
        storage.withLock { s in
            foldPassed(&s)
            foldReplaced(&s)
            let result = body(&s)
            quietUntil.store(s.machine.quietUntil?.nanoseconds ?? .min, ordering: .releasing)
            publishPassing(&s)
            publishReplacing(&s)
            return result
        }
    }

    /// Under the lock, so that tokens follow the machine's decisions in order (an executor
    /// never runs work inside `schedule`). Inlined as far as `.keep`, what most messages get.
    @inline(__always)
    func changeTimer(_ change: Machine.TimerChange, _ s: inout Storage) {
        if case .keep = change { return }
        replaceTimer(change, &s)
    }

    private func replaceTimer(_ change: Machine.TimerChange, _ s: inout Storage) {
        switch change {
        case .keep:
            return
        case .disarm:
            s.timer?.cancel()
            s.timer = nil
        case let .arm(deadline, id):
            s.timer?.cancel()
            s.timer = executor.schedule(at: deadline) { [weak self] in
                self?.timerFired(id)
            }
        }
    }

    /// Outside the lock: performs, rejects, then releases, emptying `action`.
    func carryOut(_ action: inout Machine.Action) {
        storage.assertNotHeld("payloads are performed and released outside the lock")
        if let payload = action.perform.take() { performAction(payload) }
        if let payload = action.reject.take() { rejectAction?(payload) }
        action.release = nil
    }
}

extension Limiter.Decision: Sendable where Payload: Sendable {}
