import DynamicRuntime
import Synchronization

/// A throttling rule: which messages (`target`, `selector`), how (`mode`, `duration`) and
/// where delayed messages run (`executor`). Rules stay live: changing `mode` or `duration` of
/// an applied rule takes effect at the next message.
public final class Rule: @unchecked Sendable, CustomStringConvertible {
    /// What the rule limits.
    public let target: RuleTarget
    /// The limited selector.
    public let selector: Selector

    /// What the setters wrote, and the applied state edits are forwarded to.
    private struct Settings {
        var duration: Duration
        var mode: ThrottleMode
        var executor: (any ThrottleExecutor)?
        var alwaysInvoke: (@Sendable (Rule, HookContext) -> Bool)?
        var suppressedReturn: SuppressedReturn = .zero
        var onReject: (@Sendable (Invocation) -> Void)?
        var onDelayedError: (@Sendable (any Error) -> Void)?
        var applied: AppliedRule?
    }

    private let settings: Locked<Settings>
    /// What every message asks of the settings, as bits written under the lock and read without
    /// it: `alwaysInvokeSet`, `suppressesToValue`, `lastResultKept`.
    private let hot = Atomic<UInt8>(0)
    private static let alwaysInvokeSet: UInt8 = 1
    private static let suppressesToValue: UInt8 = 2
    private static let lastResultKept: UInt8 = 4

    /// A rule for `selector` on `target`: an object (that object only), a class (its instance
    /// methods) or a metaclass (its class methods).
    public init(target: some MessageReceiver, selector: Selector, duration: Duration,
                mode: ThrottleMode = .default, executor: (any ThrottleExecutor)? = nil) {
        self.target = RuleTarget(target)
        self.selector = selector
        settings = Locked(Settings(duration: duration, mode: mode, executor: executor))
    }

    /// The window length; zero or less performs every message at once.
    ///
    /// The limiter is updated under the rule's lock (the limiter never calls out while holding
    /// its own), so concurrent edits and applies cannot leave rule and limiter disagreeing.
    public var duration: Duration {
        get { settings.withLock { $0.duration } }
        set { update(\.duration, \.duration, to: newValue) }
    }

    /// How messages are thinned out.
    public var mode: ThrottleMode {
        get { settings.withLock { $0.mode } }
        set { update(\.mode, \.mode, to: newValue) }
    }

    /// Writes a setting and, when applied, the limiter's copy, under the rule's lock.
    private func update<Value>(_ setting: WritableKeyPath<Settings, Value>,
                               _ limiterSetting: ReferenceWritableKeyPath<Limiter<Invocation>, Value>,
                               to value: Value) {
        settings.withLock {
            $0[keyPath: setting] = value
            $0.applied?.limiter[keyPath: limiterSetting] = value
        }
    }

    /// Where delayed messages run; nil uses the engine's serial queue. Read when applied.
    public var executor: (any ThrottleExecutor)? {
        get { settings.withLock { $0.executor } }
        set { settings.withLock { $0.executor = newValue } }
    }

    /// Lets a message bypass the rule (performed at once, not counted) when it returns true.
    public var alwaysInvoke: (@Sendable (Rule, HookContext) -> Bool)? {
        get { settings.withLock { $0.alwaysInvoke } }
        set {
            settings.withLock {
                $0.alwaysInvoke = newValue
                publishHot($0)
            }
        }
    }

    /// What a dropped or deferred message returns to its caller (`.zero` by default).
    public var suppressedReturn: SuppressedReturn {
        get { settings.withLock { $0.suppressedReturn } }
        set {
            settings.withLock {
                $0.suppressedReturn = newValue
                publishHot($0)
            }
        }
    }

    /// The hot bits for `s` (lock held).
    private func publishHot(_ s: Settings) {
        var bits: UInt8 = 0
        if s.alwaysInvoke != nil { bits |= Self.alwaysInvokeSet }
        if case .zero = s.suppressedReturn {} else { bits |= Self.suppressesToValue }
        if case .lastResult = s.suppressedReturn { bits |= Self.lastResultKept }
        hot.store(bits, ordering: .releasing)
    }

    /// Whether an `alwaysInvoke` filter is set (no lock: read on every message).
    var hasAlwaysInvoke: Bool { hot.load(ordering: .acquiring) & Self.alwaysInvokeSet != 0 }
    /// Whether a dropped or deferred message returns something other than zero (no lock).
    var suppressesToValue: Bool { hot.load(ordering: .acquiring) & Self.suppressesToValue != 0 }
    /// Whether performed messages' results are kept for `.lastResult` (no lock).
    var keepsLastResult: Bool { hot.load(ordering: .acquiring) & Self.lastResultKept != 0 }

    /// Receives messages rejected while cooling down (`.cooldown`). The invocation is valid
    /// during the call only; copy what you need.
    public var onReject: (@Sendable (Invocation) -> Void)? {
        get { settings.withLock { $0.onReject } }
        set { settings.withLock { $0.onReject = newValue } }
    }

    /// Receives errors from delayed messages, which have no caller to throw to.
    public var onDelayedError: (@Sendable (any Error) -> Void)? {
        get { settings.withLock { $0.onDelayedError } }
        set { settings.withLock { $0.onDelayedError = newValue } }
    }

    /// Whether the rule is applied to an engine.
    public var isApplied: Bool { applied != nil }

    /// The delayed message waiting to be performed, if any.
    public var pendingInvocation: Invocation? { applied?.limiter.pending }

    /// The result of the last message the rule let through.
    public var lastResult: DynamicValue? { applied?.lastResult }

    /// Performs the pending message now, on this thread. Returns whether one was pending.
    @discardableResult
    public func flush() -> Bool { applied?.limiter.flush() ?? false }

    /// Whether the rule's limiter has a window open now (lodash `pending()`); false when the
    /// rule is not applied.
    public var isPending: Bool { applied?.limiter.isPending ?? false }

    /// Drops the pending message but keeps the window and any cooldown going (AXKit's cancel).
    public func cancelPending() { applied?.limiter.cancelPending() }

    /// Drops the pending message and starts afresh: the next message is treated as the first.
    public func cancel() { applied?.limiter.cancel() }

    /// Applies the rule to `engine` (the shared one by default).
    public func apply(in engine: Engine = .shared) throws(ThrottleError) { try engine.apply(self) }

    /// Discards the rule from the engine it is applied to.
    @discardableResult
    public func discard(pending: PendingPolicy = .cancel) -> Bool {
        guard let engine = applied?.engine else { return false }
        return engine.discard(self, pending: pending)
    }

    /// The applied state, if any.
    var applied: AppliedRule? { settings.withLock { $0.applied } }

    /// Records the applied state; the engine calls it with `Engine.registry` held, so that
    /// applying and discarding one rule never interleave.
    func setApplied(_ a: AppliedRule?) {
        Engine.registry.assertHeld()
        settings.withLock {
            $0.applied = a
            // An edit made while the rule was being applied (after its limiter was created)
            // is not lost.
            if let limiter = a?.limiter {
                limiter.mode = $0.mode
                limiter.duration = $0.duration
            }
        }
    }

    /// The selector, target, mode and duration, for logs.
    public var description: String {
        "Rule(\(selector) on \(target), \(mode), \(duration))"
    }
}
