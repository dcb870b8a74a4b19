import CShims
import Glibc

/// fork() while other threads use the runtime: the child has only the forking thread, so a
/// runtime lock another thread held would stay locked in it forever. The handlers take every
/// process-wide runtime lock before fork, outermost first (the runtime lock is held while the
/// tables' locks are taken, never the other way round), and release them in both processes;
/// the child also forgets the other threads' read-side sections.
///
/// Not covered (docs/reliability.md, "fork"): per-object side-table locks (associations,
/// dealloc observers) and MessageThrottle's locks, which are held only briefly.
enum ForkSafety {
    /// Set once, before the handlers are registered; read only by them.
    nonisolated(unsafe) private static var locks: [RuntimeLock] = []

    /// Called once, from the runtime state's initializer (which must not be re-entered from a
    /// handler, hence the lock passed in).
    static func install(runtimeLock: RuntimeLock) {
        locks = [runtimeLock, SignatureTable.shared.lock, SelectorTable.shared.lock, WeakTable.shared.lock]
        pthread_atfork({ ForkSafety.prepare() }, { ForkSafety.parent() }, { ForkSafety.child() })
    }

    private static func prepare() {
        for lock in locks { lock.lock() }
        sf_rcu_atfork_prepare()
        sf_method_pool_atfork_prepare()
    }

    private static func parent() {
        sf_method_pool_atfork_release()
        sf_rcu_atfork_parent()
        for lock in locks.reversed() { lock.unlock() }
    }

    private static func child() {
        sf_method_pool_atfork_release()
        sf_rcu_atfork_child()
        for lock in locks.reversed() { lock.unlock() }
    }
}
