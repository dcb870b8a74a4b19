import CShims
import Glibc

/// fork() while other threads use the runtime: the child has only the forking thread, so a
/// runtime lock another thread held would stay locked in it forever. The handlers take every
/// process-wide runtime lock before fork, outermost first (the runtime lock is held while the
/// tables' locks are taken, never the other way round; the C leaf locks last: side tables,
/// trampoline slots, method entries, RCU readers), and release them in both processes; the
/// child also forgets the other threads' read-side sections.
///
/// Not covered (docs/reliability.md, "fork"): the C API's handle tables and MessageThrottle's
/// locks (a child that forks while another thread is inside them must not use them).
enum ForkSafety {
    /// Tests only: runs at the start of the prepare handler, before any lock is taken.
    nonisolated(unsafe) static var willPrepareForTesting: (() -> Void)?

    /// Set once, before the handlers are registered; read only by them.
    nonisolated(unsafe) private static var locks: [(lock: () -> Void, unlock: () -> Void)] = []

    /// Called once, from the runtime state's initializer (which must not be re-entered from a
    /// handler, hence the lock passed in).
    static func install(runtimeLock: RuntimeLock) {
        locks = [runtimeLock.forkHandlers, SignatureTable.shared.lock.forkHandlers, SelectorTable.shared.lock.forkHandlers,
                 WeakTable.shared.lock.forkHandlers, CHooks.tokens.forkHandlers, ForwardingIMP.closures.forkHandlers]
        pthread_atfork({ ForkSafety.prepare() }, { ForkSafety.parent() }, { ForkSafety.child() })
    }

    static func prepare() {
        willPrepareForTesting?()
        for l in locks { l.lock() }
        sf_side_locks_atfork_prepare()
        sf_tramp_atfork_prepare()
        sf_rcu_atfork_prepare()
        sf_method_pool_atfork_prepare()
    }

    static func parent() {
        sf_method_pool_atfork_release()
        sf_rcu_atfork_parent()
        sf_tramp_atfork_release()
        sf_side_locks_atfork_release()
        for l in locks.reversed() { l.unlock() }
    }

    private static func child() {
        sf_method_pool_atfork_release()
        sf_rcu_atfork_child()
        sf_tramp_atfork_release()
        sf_side_locks_atfork_release()
        for l in locks.reversed() { l.unlock() }
    }
}

extension Locked {
    /// Its `lock()` and `unlock()`, whatever it guards.
    fileprivate var forkHandlers: (lock: () -> Void, unlock: () -> Void) { ({ self.lock() }, { self.unlock() }) }
}
