import DynamicRuntime
import Synchronization

/// A rule's live state once applied: its hook, its limiter and a spare record to reuse.
final class AppliedRule: @unchecked Sendable {
    /// Strong: a message being performed may discard its own rule (dropping the last outside
    /// reference to it) and the hook still reads the rule's settings afterwards. The cycle
    /// (rule.applied ↔ rule) is broken when the rule is discarded.
    let rule: Rule
    let engine: Engine
    /// A constant: a message borrows it instead of retaining it (the limiter is weakly
    /// referenced by its timers, which makes its retains slow ones).
    let limiter: Limiter<Invocation>
    var hook: HookToken?
    var deallocToken: DeallocObserverToken?
    /// Where a discard stands (KB-4: a sender may still be inside the hook, about to defer a
    /// message into a limiter the discard has already settled).
    private enum Discard {
        /// `Engine.discard` is settling the limiter; `again` asks it for one more round.
        case settling(PendingPolicy, again: Bool)
        /// Done: a sender that defers from now on applies the policy itself.
        case settled(PendingPolicy)
    }

    /// A record no limiter holds, filled by the next captured message: captured calls allocate
    /// nothing in steady state.
    private let spare = SpareRecord()
    /// Set when a discard begins, so a deferring sender checks `Shared.discard` only then.
    private let discarding = Atomic<Bool>(false)

    private struct Shared {
        var lastResult: DynamicValue?
        var discard: Discard?
    }

    private let shared = Locked(Shared())

    /// A timer or a sender may still be running when the rule is discarded on another thread:
    /// the limiter's callbacks hold the state weakly (a discarded rule performs nothing more),
    /// and the hook body holds it strongly for as long as a sender can still reach the hook
    /// (the chain is freed after a grace period).
    init(rule: Rule, engine: Engine, executor: any ThrottleExecutor) {
        self.rule = rule
        self.engine = engine
        let me = WeakBox<AppliedRule>()
        limiter = Limiter<Invocation>(
            mode: rule.mode, duration: rule.duration, executor: executor,
            perform: { inv in me.value?.performDelayed(inv) },
            reject: { [weak rule] inv in rule?.onReject?(inv) })
        me.value = self
    }

    /// What the hook's closure captures: the state, strongly, behind an object nothing refers
    /// to weakly. The hook retains its closure's context on every call, and the state itself
    /// has a side table (the limiter's callbacks hold it weakly), which makes each of its
    /// retains and releases a slow one.
    final class Hooked: Sendable {
        let state: AppliedRule
        init(_ state: AppliedRule) { self.state = state }
    }

    /// The state, weakly, for the limiter's callbacks, which are made before the state is.
    private final class WeakBox<Value: AnyObject>: @unchecked Sendable {
        /// Set once, before the limiter can call back.
        weak var value: Value?
    }

    var lastResult: DynamicValue? { shared.withLock { $0.lastResult } }

    /// Called by `Engine.discard` before it removes the hook.
    func beginDiscard(_ policy: PendingPolicy) {
        shared.withLock { $0.discard = .settling(policy, again: false) }
        // Sequentially consistent on both sides: a sender that deferred (under the limiter's
        // lock) and then reads false is seen by the settling that follows this store.
        discarding.store(true, ordering: .sequentiallyConsistent)
    }

    /// Flushes or cancels the limiter on the discarding thread until no sender asked for
    /// another round, so everything deferred before this returns is settled here.
    func finishDiscard(_ policy: PendingPolicy) {
        repeat {
            switch policy {
            case .flush: limiter.flush()
            case .cancel: limiter.cancel()
            }
        } while shared.withLock { state -> Bool in
            if case .settling(_, again: true) = state.discard {
                state.discard = .settling(policy, again: false)
                return true
            }
            state.discard = .settled(policy)
            return false
        }
    }

    /// The hook body: decide, then perform now, drop, or keep the call for later. Inlined into
    /// the hook's closure as far as the decisions made without the lock (a dropped call, a
    /// call performed at once); a call the limiter may keep goes on in `handleKept`.
    @inline(__always)
    func handle(_ ctx: HookContext) throws {
        if PerformingCall.isActive(ctx, decidedFor: self) {
            // An instance rule, a nearer level's rule that performs or replays this call, or
            // our own replay: it was decided for us already.
            try ctx.proceed()
            return
        }
        if ctx.receiverHasOwnInsteadHooks, case .instances = rule.target,
           Engine.hasInstanceRule(ctx.target, ctx.selector) {
            // The object's own instead hooks run before the class's: its instance rule
            // decided for it, this class rule lets the call through.
            try ctx.proceed()
            return
        }
        if rule.hasAlwaysInvoke, let always = rule.alwaysInvoke, always(rule, ctx) {
            try perform(ctx)
            return
        }
        // The limiter decides first and asks for a record only if it keeps the call: a call
        // performed now or dropped inside its window copies and retains nothing.
        let now = limiter.now
        switch limiter.shortcut(at: now) {
        case .performNow?:
            try perform(ctx)
        case .dropped?:
            if rule.suppressesToValue { try writeSuppressedReturn(ctx) }
        case .deferred?, nil:
            try handleKept(ctx, at: now)
        }
    }

    /// A message the limiter may keep: judged under its lock, or in its slot, where it rewrites
    /// the held record when only argument words differ (`HookContext.refill`) and is swapped in
    /// otherwise; its record is made only if kept and not written over the held one.
    @inline(never)
    private func handleKept(_ ctx: HookContext, at now: ThrottleInstant) throws {
        // The closure holds the state unretained (a trivial capture): captured strongly, the
        // specialized `receive` would retain and release it per call, and the state's retains
        // are slow ones (it has a side table).
        let me = ObjectWord(unretained: self)
        var (verdict, displaced) = limiter.receiveKept(at: now, making: {
            var record = me.withObject { $0.spare.take() }
            ctx.capture(intoSpare: &record)
            return record.take()!
        }, refills: true, refilling: { held in ctx.refill(&held) })
        switch verdict {
        case .performNow:
            try perform(ctx)
        case .dropped:
            if rule.suppressesToValue { try writeSuppressedReturn(ctx) }
        case .deferred:
            if rule.suppressesToValue { try writeSuppressedReturn(ctx) }
            if discarding.load(ordering: .sequentiallyConsistent) { settleIfDiscarded() }
        }
        // The record the limiter just let go of (or one cooldown made for onReject, which may
        // have kept it) can serve the next message.
        // Consumed, not taken: a taken Optional is released (empty) at the end. Checked in
        // place: a mutating check on a fresh local binding miscompiles in Swift 6.3.1 release
        // builds (the local is never stored).
        // Nil (a refill, most messages) returns on its own: a combined check released the nil.
        guard displaced != nil else { return }
        guard displaced!.isUniquelyReferenced() else { return }
        spare.offer((consume displaced).unsafelyUnwrapped)
    }

    /// After a `.deferred` that found `discarding` set: the discard may already have
    /// settled the limiter. While it is still settling, ask it for another round; once it is
    /// done, apply its policy here. `receive` ran before this check, and the discard marks
    /// before it settles, so one of the two always sees the message.
    private func settleIfDiscarded() {
        let policy = shared.withLock { state -> PendingPolicy? in
            switch state.discard {
            case nil:
                return nil
            case let .settling(p, _):
                state.discard = .settling(p, again: true)
                return nil
            case let .settled(p):
                return p
            }
        }
        switch policy {
        case nil: break
        case .flush?: limiter.flush()
        case .cancel?: limiter.cancel()
        }
    }

    @inline(__always)
    private func perform(_ ctx: HookContext) throws {
        try PerformingCall.with(ctx.target, ctx.selector, by: self) { () throws(RuntimeError) in try ctx.proceed() }
        if rule.keepsLastResult { keepLastResult(ctx.returnValue) }
    }

    @inline(never)
    private func keepLastResult(_ value: DynamicValue) {
        shared.withLock { $0.lastResult = value }
    }

    /// Performs a held message (on the executor, or on a flushing thread).
    func performDelayed(_ invocation: Invocation) {
        // A record captured from a dying receiver's dealloc observer holds nil: dropped.
        guard !invocation.target.isNil else { return }
        do {
            try PerformingCall.with(invocation.target, invocation.selector, by: self) { try invocation.invoke() }
            if rule.keepsLastResult {
                let value = invocation.returnValue
                shared.withLock { $0.lastResult = value }
            }
        } catch {
            rule.onDelayedError?(error)
        }
    }

    /// Only when `rule.suppressesToValue`: otherwise the hook cleared the return storage, and
    /// zero needs no lock and no write.
    private func writeSuppressedReturn(_ ctx: HookContext) throws {
        switch rule.suppressedReturn {
        case .zero:
            break
        case let .value(v):
            try ctx.setReturnValue(v)
        case .lastResult:
            if let v = lastResult { try ctx.setReturnValue(v) }
        }
    }
}
