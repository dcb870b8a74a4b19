import Synchronization

/// The messages a limiter keeps without its lock: inside an open window of `last`,
/// `throttleSincePerformed(latest: true)` or `debounce` (`LimiterStateMachine.replaceWindow`),
/// a message's only effects are to replace the held payload and to move `lastCall` (and the
/// latest instant) to its own instant. While that holds, the held payload lives in one double
/// word, `slot` (the payload, `lastCall`), and a message swaps its own in with one compare-and-
/// exchange; the payload it displaced is released by the caller, outside any lock. Every event
/// under the lock takes the slot back first (`foldReplaced`), so the machine sees the last
/// payload swapped in and the instant it was judged at.
///
/// Only payloads one reference wide (an object, or a struct around one, such as an
/// `Invocation`) move through the slot, as their bits; others always take the lock.
extension Limiter {
    /// The low 48 bits of the slot's first word: the payload's bits (user-space addresses on
    /// x86-64 and arm64 fit in them).
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
        // Inside a window that only replaces the held payload, the payload is swapped in
        // without the lock.
        // The payload made but not swapped in travels as its bits: an Optional payload local
        // here would cost a release (of nil) on the swap's return.
        var madeWord: UInt = 0
        if movesAsWord, let displaced = replacing(at: now, making: make, made: &madeWord) {
            return (.deferred, displaced)
        }
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

    /// A message at `now` inside a replacing window: makes its payload (outside the lock) and
    /// swaps it in. Returns the payload it displaced; nil when the window is not (or no longer)
    /// replacing, leaving the payload it made, if any, in `made` (its bits, 0 for none) for
    /// the locked path.
    /// Linearized at the compare-and-exchange, which also checks that the slot is still
    /// published and unchanged since the window's rules were read (a 16-bit generation in
    /// the first word's top bits tells one publication from the next).
    @inline(__always)
    func replacing(at now: ThrottleInstant, making make: () -> Payload, made: inout UInt) -> Payload? {
        var seen = WordPair(first: slotSeenFirst.load(ordering: .acquiring),
                            second: slotSeenSecond.load(ordering: .acquiring))
        if seen.first == 0 {
            seen = slot.load(ordering: .acquiring)
            guard seen.first != 0 else { return nil }
        }
        var word: UInt = 0
        while true {
            // Judged at the latest instant seen: the last call's, or the last event's under the lock.
            let last = Int64(bitPattern: UInt64(seen.second))
            let judged = max(now.nanoseconds, last, replaceLatest.load(ordering: .relaxed))
            var limit = replaceFixed.load(ordering: .relaxed)
            let follow = replaceFollow.load(ordering: .relaxed)
            if follow != .min { limit = max(limit, ThrottleInstant(nanoseconds: last).adding(follow).nanoseconds) }
            guard judged < limit else { break }
            if word == 0 {
                word = Self.word(of: make())
                guard word != 0, word & ~Self.payloadBits == 0 else { break }
            }
            let desired = WordPair(first: (seen.first & ~Self.payloadBits) | word,
                                   second: UInt(bitPattern: Int(judged)))
            let (exchanged, current) = slot.compareExchange(
                expected: seen, desired: desired, ordering: .acquiringAndReleasing)
            if exchanged {
                noteSlot(desired)
                return Self.payload(fromWord: seen.first & Self.payloadBits)
            }
            seen = current
            if seen.first == 0 { break }
        }
        made = word
        return nil
    }

    /// Lock held: takes the slot back, the payload into the machine and the last call's instant
    /// into the history, as the machine would have recorded them (published as `lastCall`, the
    /// instant moves only with messages swapped in).
    @inline(__always)
    func foldReplaced(_ s: inout Storage) {
        guard s.slotPublished else { return }
        s.slotPublished = false
        let empty = WordPair(first: 0, second: 0)
        let pair = slot.exchange(empty, ordering: .acquiringAndReleasing)
        noteSlot(empty)
        s.machine.held = Self.payload(fromWord: pair.first & Self.payloadBits)
        let lastCall = ThrottleInstant(nanoseconds: Int64(bitPattern: UInt64(pair.second)))
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
        let tagged = UInt(s.slotGeneration & 0xFFFF) << 48 | word
        let pair = WordPair(first: tagged, second: UInt(bitPattern: Int(lastCall.nanoseconds)))
        slot.store(pair, ordering: .releasing)
        noteSlot(pair)
        s.slotPublished = true
    }

    /// Copies a value just written to `slot` into `slotSeenFirst` and `slotSeenSecond`.
    @inline(__always)
    func noteSlot(_ pair: WordPair) {
        slotSeenSecond.store(pair.second, ordering: .releasing)
        slotSeenFirst.store(pair.first, ordering: .releasing)
    }
}
