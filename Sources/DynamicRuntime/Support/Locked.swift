#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if DEBUG
import Synchronization
#endif

/// A mutex that owns the state it guards: the state is reachable only inside ``withLock(_:)``,
/// so "guarded by" is a rule the compiler checks instead of a comment.
///
/// A pthread mutex rather than `Synchronization.Mutex`: callers move non-`Sendable` payloads
/// out of the critical section (to perform or release them after unlocking), which
/// `Mutex.withLock`'s `sending` rules reject. Not recursive.
///
/// Debug builds record the owning thread, so ``assertHeld(_:file:line:)`` can check a
/// "called with the lock held" rule; release builds keep nothing and check nothing.
package final class Locked<State> {
    // Heap-allocated once so the pthread object never moves.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // Only touched with `mutex` held; the exclusivity check would cost the hot path a runtime
    // call per access for nothing.
    @exclusivity(unchecked) @usableFromInline var state: State
    #if DEBUG
    /// The holder's `pthread_self()`, 0 when free; atomic so a wrong assertion cannot race.
    @usableFromInline let owner = Atomic<UInt>(0)
    #endif

    /// A lock guarding `initial`.
    package init(_ initial: State) {
        state = initial
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on the state with the lock held and returns its result.
    @inlinable @inline(__always)
    package func withLock<R, E: Error>(_ body: (inout State) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        #if DEBUG
        Self.markOwner(owner, from: 0)
        #endif
        defer {
            #if DEBUG
            Self.clearOwner(owner)
            #endif
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Takes the lock outside a scope: only for fork handlers, which lock in one callback and
    /// unlock in another. Everything else uses ``withLock(_:)``.
    package func lock() {
        pthread_mutex_lock(mutex)
        #if DEBUG
        Self.markOwner(owner, from: 0)
        #endif
    }

    /// Releases a lock taken with ``lock()``.
    package func unlock() {
        #if DEBUG
        Self.clearOwner(owner)
        #endif
        pthread_mutex_unlock(mutex)
    }

    /// Traps in debug builds unless the calling thread holds the lock; nothing in release.
    @inlinable @inline(__always)
    package func assertHeld(_ message: @autoclosure () -> String = "lock not held",
                            file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        precondition(isHeldByCurrentThread, message(), file: file, line: line)
        #endif
    }

    /// Traps in debug builds if the calling thread holds the lock (it is about to take it, or
    /// to call out to code that may); nothing in release.
    @inlinable @inline(__always)
    package func assertNotHeld(_ message: @autoclosure () -> String = "lock held",
                               file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        precondition(!isHeldByCurrentThread, message(), file: file, line: line)
        #endif
    }

    #if DEBUG
    /// Whether the calling thread holds the lock (debug builds only: release keeps no owner).
    @inlinable
    package var isHeldByCurrentThread: Bool { owner.load(ordering: .relaxed) == Self.currentThread }

    @usableFromInline
    static var currentThread: UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    @usableFromInline
    static func markOwner(_ owner: borrowing Atomic<UInt>, from expected: UInt) {
        let (exchanged, _) = owner.compareExchange(expected: expected, desired: currentThread, ordering: .relaxed)
        precondition(exchanged, "Locked: owner already set while acquiring")
    }

    @usableFromInline
    static func clearOwner(_ owner: borrowing Atomic<UInt>) {
        owner.store(0, ordering: .relaxed)
    }
    #endif
}

extension Locked: @unchecked Sendable where State: Sendable {}
