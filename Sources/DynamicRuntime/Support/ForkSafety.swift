import CDynamicRuntime
import Glibc

/// fork() while other threads use the runtime: the child has only the forking thread, so a
/// runtime lock another thread held would stay locked in it forever. The handlers take every
/// process-wide runtime lock before fork, outermost first (the runtime lock is held while the
/// tables' locks are taken, never the other way round; the C leaf locks last: side tables,
/// trampoline slots, method entries, RCU readers; then the `+initialize` monitor), and release them in both processes; the
/// child also forgets the other threads' read-side sections.
///
/// Locks made later (the C API's handle tables) register themselves; they are leaves, taken
/// after the runtime's. Not covered (docs/reliability.md, "fork"): MessageThrottle's locks and
/// the Swift runtime's own.
enum ForkSafety {
    /// Tests only: runs at the start of the prepare handler, before any lock is taken.
    nonisolated(unsafe) static var willPrepareForTesting: (() -> Void)?

    /// Set once, before the handlers are registered; read only by them.
    nonisolated(unsafe) private static var locks: [(lock: () -> Void, unlock: () -> Void)] = []

    /// Leaf locks registered by their owners, in the order they were made; the list's own lock is
    /// held from prepare to release, so the list does not change meanwhile.
    nonisolated(unsafe) private static let registered = Locked<[(lock: () -> Void, unlock: () -> Void)]>([])

    /// Has the fork handlers take `lock` too; it must be a leaf (nothing is taken under it).
    static func register<State>(_ lock: Locked<State>) {
        registered.withLock { $0.append(lock.forkHandlers) }
        // The handlers are installed with the runtime state: a table may come first.
        _ = Runtime.state
    }

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
        registered.lock()
        for l in registered.state { l.lock() }
        sf_side_locks_atfork_prepare()
        sf_tramp_atfork_prepare()
        sf_rcu_atfork_prepare()
        sf_method_pool_atfork_prepare()
        ClassInitialization.atforkPrepare()
    }

    static func parent() {
        ClassInitialization.atforkParent()
        sf_method_pool_atfork_release()
        sf_rcu_atfork_parent()
        sf_tramp_atfork_release()
        sf_side_locks_atfork_release()
        for l in registered.state.reversed() { l.unlock() }
        registered.unlock()
        for l in locks.reversed() { l.unlock() }
    }

    private static func child() {
        ClassInitialization.atforkChild()
        sf_method_pool_atfork_release()
        sf_rcu_atfork_child()
        sf_tramp_atfork_release()
        sf_side_locks_atfork_release()
        for l in registered.state.reversed() { l.unlock() }
        registered.unlock()
        for l in locks.reversed() { l.unlock() }
    }
}

extension Locked {
    /// Its `lock()` and `unlock()`, whatever it guards.
    fileprivate var forkHandlers: (lock: () -> Void, unlock: () -> Void) { ({ self.lock() }, { self.unlock() }) }
}
