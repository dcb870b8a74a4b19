import Synchronization

/// The messages a limiter performs without its lock: while nothing limits them (a duration of
/// zero or less, nothing held, no timer, no edit waiting), a message's only effect is on the
/// machine's history (`lastCall` and `lastInvoke` become the latest instant), which one atomic
/// word (`passedAt`) carries until the next event under the lock folds it back.
extension Limiter {
    /// Whether a message at `now` passes without the lock; if so, its instant is recorded.
    /// Linearized at the load that finds the word published (nothing to record: the machine's
    /// history is already at or past `now`) or at the exchange that moves it to `now`. An event
    /// under the lock takes the word back (`Int64.min`) first, so a message that loses the race
    /// to it takes the lock and is judged by the machine.
    @inline(__always)
    func passes(at now: ThrottleInstant) -> Bool {
        var seen = passedAt.load(ordering: .relaxed)
        while seen != .min {
            if now.nanoseconds <= seen { return true }
            let (exchanged, current) = passedAt.compareExchange(
                expected: seen, desired: now.nanoseconds, ordering: .relaxed)
            if exchanged { return true }
            seen = current
        }
        return false
    }

    /// Lock held: takes the word back and records the messages that passed since it was
    /// published, as the machine would have (each judged at the latest instant seen).
    @inline(__always)
    func foldPassed(_ s: inout Storage) {
        guard s.passPublished != .min else { return }
        let passed = passedAt.exchange(.min, ordering: .relaxed)
        defer { s.passPublished = .min }
        guard passed > s.passPublished else { return }
        let instant = ThrottleInstant(nanoseconds: passed)
        s.latest = instant
        s.machine.history.lastCall = instant
        s.machine.history.lastInvoke = instant
    }

    /// Lock held, after an event: publishes the word when the machine passes every message and
    /// its history stands at the latest instant (a message at or before it changes nothing).
    @inline(__always)
    func publishPassing(_ s: inout Storage) {
        guard s.machine.passesEverything, s.latest.nanoseconds != .min,
              s.machine.history.lastCall == s.latest, s.machine.history.lastInvoke == s.latest else { return }
        s.passPublished = s.latest.nanoseconds
        passedAt.store(s.latest.nanoseconds, ordering: .relaxed)
    }
}
