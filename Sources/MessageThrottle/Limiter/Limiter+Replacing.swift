import Synchronization

/// The messages a limiter keeps without its lock: inside an open window of `last`,
/// `throttleSincePerformed(latest: true)` or `debounce` (`LimiterStateMachine.replaceWindow`),
/// a message's only effects are to replace the held payload and to move `lastCall` (and the
/// latest instant) to its own instant. While that holds, the held payload and `lastCall` live
/// in `slot` (`ReplacingSlot`). A message claims the slot with one compare-and-exchange,
/// rewrites the held payload in place when the caller can (a captured call of the same target
/// and signature) or swaps its own in, and gives the slot back with a store; a payload it
/// displaced is released by the caller, outside any lock. Every event
/// under the lock takes the slot back first (`foldReplaced`), so the machine sees the last
/// payload and the instant it was judged at.
///
/// Only payloads one reference wide (an object, or a struct around one, such as an
/// `Invocation`) move through the slot; others always take the lock.
extension Limiter {
    /// The rest of `receive(making:)`, out of line so that the shortcuts above stay inlined
    /// into the caller.
    @inline(never)
    func receiveKept(at now: ThrottleInstant, making make: () -> Payload) -> (verdict: Verdict, displaced: Payload?) {
        receiveKept(at: now, making: make, refills: false, refilling: { _ in false })
    }

    /// `receiveKept(at:making:)` for a caller that can rewrite the held payload: with
    /// `refills`, `refill` may do so in place instead of a new payload being made and swapped
    /// in (see `replacing`); it returns whether it did. `refill` runs while the slot is
    /// claimed: it must be short, call nothing that can run user code, and leave the payload
    /// alone unless it returns true. Inlined into the caller as far as the slot; the lock is
    /// taken out of line.
    @inline(__always)
    func receiveKept(at now: ThrottleInstant, making make: () -> Payload, refills: Bool,
                     refilling refill: (inout Payload) -> Bool) -> (verdict: Verdict, displaced: Payload?) {
        // Inside a window that only replaces the held payload, the payload is swapped in (or
        // refilled) without the lock.
        // The payload made but not swapped in travels packed: an Optional payload local here
        // would cost a release (of nil) on the swap's return.
        var made: ReplacingSlot<Payload>.Packed? = nil
        if movesAsWord {
            switch replacing(at: now, making: make, refills: refills, refilling: refill, made: &made) {
            case .refilled: return (.deferred, nil)
            case .swapped(let displaced): return (.deferred, displaced)
            case .notReplacing: break
            case .unfit(let payload): return receiveLocked(at: now, made: payload, making: make)
            }
        }
        return receiveLocked(at: now, made: made.take()?.unpack(), making: make)
    }

    /// A message judged under the lock, with the payload `replacing` made, if any.
    @inline(never)
    func receiveLocked(at now: ThrottleInstant, made: consuming Payload?, making make: () -> Payload)
        -> (verdict: Verdict, displaced: Payload?) {
        var made = made
        var (verdict, action) = locked { s in
            if s.latest < now { s.latest = now }
            let result = s.machine.messageArrived(at: s.latest, making: { made.take() ?? make() })
            changeTimer(result.action.timer, &s)
            return result
        }
        let displaced = action.release.take() ?? made.take()
        let rejected = action.reject.take()
        carryOut(&action)
        guard let rejected else { return (verdict, displaced) }
        rejectAction?(rejected)
        return (verdict, displaced ?? rejected)
    }

    /// What `replacing` did with a message.
    enum Replacement {
        /// The held payload was rewritten in place; nothing was displaced.
        case refilled
        /// The message's payload was swapped in; the held one comes back.
        case swapped(Payload)
        /// The window is not (or no longer) replacing: the message takes the lock.
        case notReplacing
        /// The payload made cannot move through the slot: the message takes the lock with it.
        case unfit(Payload)
    }

    /// A message at `now` inside a replacing window: claims the slot, judges the message
    /// against the window, then either lets `refill` rewrite the held payload or swaps in a
    /// payload made outside the claim, and gives the slot back. A payload made but not swapped
    /// in is left in `made` for the locked path.
    /// While the slot is claimed its payload and `lastCall` belong to the claimer alone, so
    /// refilling needs no second exchange and no new record; nothing that can run user code
    /// (a release, `make`) runs inside the claim.
    @inline(__always)
    func replacing(at now: ThrottleInstant, making make: () -> Payload, refills: Bool,
                   refilling refill: (inout Payload) -> Bool,
                   made: inout ReplacingSlot<Payload>.Packed?) -> Replacement {
        // Whether the window took this message a moment ago, under a claim.
        var taken = false
        if refills {
            guard let claim = slot.claim() else { return .notReplacing }
            guard let judged = judged(now) else {
                slot.giveBack(claim)
                return .notReplacing
            }
            if slot.withHeld(claim, refill) {
                slot.giveBack(claim, lastCall: judged)
                return .refilled
            }
            // Not refillable (another record, target or implementation): a payload is made
            // outside the claim and swapped in.
            slot.giveBack(claim)
            taken = true
        }
        // Made only for a message the window would take (judged here without the claim unless
        // it just was under one, and again under the next).
        guard taken || (slot.isPublished && judged(now) != nil) else { return .notReplacing }
        var payload: Payload? = make()
        made = ReplacingSlot.pack(&payload)
        // Not one the slot can hold: the locked path gets it back.
        guard made != nil else { return .unfit(payload.take().unsafelyUnwrapped) }
        guard let claim = slot.claim() else { return .notReplacing }
        guard let judged = judged(now) else {
            slot.giveBack(claim)
            return .notReplacing
        }
        return .swapped(slot.swap(claim, for: made.take()!, lastCall: judged))
    }

    /// The instant a message at `now` is judged at inside the published replacing window
    /// (the latest of its own, the last call's and the last event's), or nil once it falls
    /// past the window's edge. Authoritative only while the slot is claimed.
    @inline(__always)
    func judged(_ now: ThrottleInstant) -> Int64? {
        let last = slot.lastCall
        let judged = max(now.nanoseconds, last, replaceLatest.load(ordering: .relaxed))
        var limit = replaceFixed.load(ordering: .relaxed)
        let follow = replaceFollow.load(ordering: .relaxed)
        if follow != .min { limit = max(limit, ThrottleInstant(nanoseconds: last).adding(follow).nanoseconds) }
        return judged < limit ? judged : nil
    }

    /// Lock held: takes the slot back, the payload into the machine and the last call's instant
    /// into the history, as the machine would have recorded them (published as `lastCall`, the
    /// instant moves only with messages swapped in).
    @inline(__always)
    func foldReplaced(_ s: inout Storage) {
        guard s.slotPublished else { return }
        s.slotPublished = false
        guard let claim = slot.claim() else { return }
        let (payload, nanoseconds) = slot.takeBack(claim)
        s.machine.held = payload
        let lastCall = ThrottleInstant(nanoseconds: nanoseconds)
        s.machine.history.lastCall = lastCall
        if s.latest < lastCall { s.latest = lastCall }
    }

    /// Lock held, after an event: moves the held payload into the slot when the machine's
    /// window replaces.
    @inline(__always)
    func publishReplacing(_ s: inout Storage) {
        guard movesAsWord, let window = s.machine.replaceWindow, let lastCall = s.machine.history.lastCall else { return }
        guard let packed = ReplacingSlot.pack(&s.machine.held) else { return }
        replaceFixed.store(window.fixed.nanoseconds, ordering: .relaxed)
        replaceFollow.store(window.follow ?? .min, ordering: .relaxed)
        replaceLatest.store(s.latest.nanoseconds, ordering: .relaxed)
        s.slotGeneration &+= 1
        slot.publish(packed, lastCall: lastCall.nanoseconds, generation: s.slotGeneration)
        s.slotPublished = true
    }
}
