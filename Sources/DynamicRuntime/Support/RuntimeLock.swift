/// The runtime's locks guard state that lives in the objects around them (method tables, the
/// class registry, the interning tables), so they are `Locked` boxes with no value of their
/// own: one pthread wrapper, with the same debug-only `assertHeld()`. Writers hold them
/// briefly; the send fast path never takes them.
typealias RuntimeLock = Locked<Void>

extension Locked where State == Void {
    /// A lock with no state of its own.
    convenience init() { self.init(()) }

    /// Runs `body` with the lock held.
    ///
    /// Never forms `&state`: an empty state shares its address with the debug owner word, so
    /// ThreadSanitizer would take the access for a race with every `assertHeld()` reader.
    @inline(__always)
    func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}
