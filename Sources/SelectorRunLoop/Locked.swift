import Foundation

/// A value behind a lock, shareable across threads (the state of timers, requests, monitors).
/// `body` never calls out to user code: callbacks run after the lock is dropped.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
