import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The messages a limiter keeps without its lock: inside an open window of `last`,
/// `throttleSincePerformed(latest: true)` or `debounce` (`LimiterStateMachine.replaceWindow`),
/// a message's only effects are to replace the held payload and to move `lastCall` (and the
/// latest instant) to its own instant. While that holds, the held payload lives in `slot` as
/// its bits and `lastCall` in `slotLastCall`. A message claims the slot with one
/// compare-and-exchange, rewrites the held payload in place when the caller can (a captured
/// call of the same target and signature) or swaps its own in, and gives the slot back with a
/// store; a payload it displaced is released by the caller, outside any lock. Every event
/// under the lock takes the slot back first (`foldReplaced`), so the machine sees the last
/// payload and the instant it was judged at.
///
/// Only payloads one reference wide (an object, or a struct around one, such as an
/// `Invocation`) move through the slot, as their bits; others always take the lock.
extension Limiter {
    /// The low 48 bits of the slot's word: the payload's bits (user-space addresses on x86-64
    /// and arm64 fit in them).
    static var payloadBits: UInt { (1 << 48) - 1 }

    /// Whether `Payload` is one word whose `nil` is the zero word, so that it can be moved into
    /// and out of a word by its bits.
    static func movesAsWord() -> Bool {
        guard MemoryLayout<Payload>.size == MemoryLayout<UInt>.size,
              MemoryLayout<Payload?>.size == MemoryLayout<UInt>.size else { return false }
        var none: Payload? = nil
        return withUnsafeBytes(of: &none) { $0.load(as: UInt.self) } == 0
    }

    /// The payload's bits, handing over its reference (no retain or release).
    @inline(__always)
    static func word(of payload: consuming Payload) -> UInt {
        var p: Payload? = payload
        return withUnsafeMutableBytes(of: &p) { bytes in
            let word = bytes.load(as: UInt.self)
            bytes.storeBytes(of: 0, as: UInt.self)
            return word
        }
    }

    /// The payload `word(of:)` handed over.
    @inline(__always)
    static func payload(fromWord word: UInt) -> Payload {
        var p: Payload? = nil
        withUnsafeMutableBytes(of: &p) { $0.storeBytes(of: word, as: UInt.self) }
        return p.take().unsafelyUnwrapped
    }

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
        // The payload made but not swapped in travels as its bits: an Optional payload local
        // here would cost a release (of nil) on the swap's return.
        var madeWord: UInt = 0
        if movesAsWord {
            switch replacing(at: now, making: make, refills: refills, refilling: refill, made: &madeWord) {
            case .refilled: return (.deferred, nil)
            case .swapped(let displaced): return (.deferred, displaced)
            case .notReplacing: break
            }
        }
        return receiveLocked(at: now, madeWord: madeWord, making: make)
    }

    /// A message judged under the lock, with the payload `replacing` made (its bits), if any.
    @inline(never)
    func receiveLocked(at now: ThrottleInstant, madeWord: UInt, making make: () -> Payload)
        -> (verdict: Verdict, displaced: Payload?) {
        var made: Payload? = madeWord == 0 ? nil : Self.payload(fromWord: madeWord)
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
    }

    /// A message at `now` inside a replacing window: claims the slot (one compare-and-exchange
    /// sets `claimBit`), judges the message against the window, then either lets `refill`
    /// rewrite the held payload or swaps in a payload made outside the claim, and gives the
    /// slot back with a plain store. A payload made but not swapped in is left in `made` (its
    /// bits, 0 for none) for the locked path.
    /// While the slot is claimed its payload and `slotLastCall` belong to the claimer alone, so
    /// refilling needs no second exchange and no new record; nothing that can run user code
    /// (a release, `make`) runs inside the claim.
    @inline(__always)
    func replacing(at now: ThrottleInstant, making make: () -> Payload, refills: Bool,
                   refilling refill: (inout Payload) -> Bool, made: inout UInt) -> Replacement {
        var word: UInt = 0
        var tryRefill = refills
        while true {
            if !tryRefill, word == 0 {
                // Made outside the claim, and only for a message the window would take (judged
                // without the claim here, and again under it).
                guard slot.load(ordering: .relaxed) != 0, judged(now) != nil else { break }
                word = Self.word(of: make())
                guard word != 0, word & ~Self.payloadBits == 0 else { break }
            }
            guard let seen = claimSlot() else { break }
            guard let judged = judged(now) else {
                slot.store(seen, ordering: .releasing)
                break
            }
            if tryRefill {
                var held = Self.payload(fromWord: seen & Self.payloadBits)
                let refilled = refill(&held)
                _ = Self.word(of: consume held)
                if refilled {
                    slotLastCall.store(judged, ordering: .relaxed)
                    slot.store(seen, ordering: .releasing)
                    return .refilled
                }
                // Not refillable (another record, target or implementation): a payload is made
                // outside the claim and swapped in.
                slot.store(seen, ordering: .releasing)
                tryRefill = false
                continue
            }
            slotLastCall.store(judged, ordering: .relaxed)
            slot.store((seen & ~Self.payloadBits) | word, ordering: .releasing)
            return .swapped(Self.payload(fromWord: seen & Self.payloadBits))
        }
        made = word
        return .notReplacing
    }

    /// The instant a message at `now` is judged at inside the published replacing window
    /// (the latest of its own, the last call's and the last event's), or nil once it falls
    /// past the window's edge. Authoritative only while the slot is claimed.
    @inline(__always)
    func judged(_ now: ThrottleInstant) -> Int64? {
        let last = slotLastCall.load(ordering: .relaxed)
        let judged = max(now.nanoseconds, last, replaceLatest.load(ordering: .relaxed))
        var limit = replaceFixed.load(ordering: .relaxed)
        let follow = replaceFollow.load(ordering: .relaxed)
        if follow != .min { limit = max(limit, ThrottleInstant(nanoseconds: last).adding(follow).nanoseconds) }
        return judged < limit ? judged : nil
    }

    /// The bit of the slot's word that marks it claimed (by a sender or by `foldReplaced`).
    static var claimBit: UInt { 1 << 63 }

    /// Claims the published slot: returns its word (unclaimed) once this thread has set
    /// `claimBit`, nil when nothing is published. A claim lasts a few dozen instructions, so a
    /// claimed slot is waited for rather than given up on.
    @inline(__always)
    func claimSlot() -> UInt? {
        var seen = slot.load(ordering: .relaxed)
        var spins = 0
        while true {
            if seen == 0 { return nil }
            if seen & Self.claimBit != 0 {
                spins += 1
                if spins & 63 == 0 { sched_yield() }
                seen = slot.load(ordering: .relaxed)
                continue
            }
            let (exchanged, current) = slot.compareExchange(
                expected: seen, desired: seen | Self.claimBit, ordering: .acquiring)
            if exchanged { return seen }
            seen = current
        }
    }

    /// Lock held: takes the slot back, the payload into the machine and the last call's instant
    /// into the history, as the machine would have recorded them (published as `lastCall`, the
    /// instant moves only with messages swapped in).
    @inline(__always)
    func foldReplaced(_ s: inout Storage) {
        guard s.slotPublished else { return }
        s.slotPublished = false
        guard let word = claimSlot() else { return }
        let lastCall = ThrottleInstant(nanoseconds: slotLastCall.load(ordering: .relaxed))
        slot.store(0, ordering: .relaxed)
        s.machine.held = Self.payload(fromWord: word & Self.payloadBits)
        s.machine.history.lastCall = lastCall
        if s.latest < lastCall { s.latest = lastCall }
    }

    /// Lock held, after an event: moves the held payload into the slot when the machine's
    /// window replaces.
    @inline(__always)
    func publishReplacing(_ s: inout Storage) {
        guard movesAsWord, let window = s.machine.replaceWindow, let lastCall = s.machine.history.lastCall else { return }
        let word = Self.word(of: s.machine.held.take().unsafelyUnwrapped)
        guard word != 0, word & ~Self.payloadBits == 0 else {
            s.machine.held = Self.payload(fromWord: word)
            return
        }
        replaceFixed.store(window.fixed.nanoseconds, ordering: .relaxed)
        replaceFollow.store(window.follow ?? .min, ordering: .relaxed)
        replaceLatest.store(s.latest.nanoseconds, ordering: .relaxed)
        s.slotGeneration &+= 1
        slotLastCall.store(lastCall.nanoseconds, ordering: .relaxed)
        slot.store(UInt(s.slotGeneration & 0x7FFF) << 48 | word, ordering: .releasing)
        s.slotPublished = true
    }
}
