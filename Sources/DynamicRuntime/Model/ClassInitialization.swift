import CDynamicRuntime
import Glibc
import Synchronization

/// `+initialize`, sent as objc4 and libobjc2 send it: once per class, before the first message
/// to the class or to an instance (or the first instance made), superclass first, on the thread
/// that sends first while other threads wait for it to return. The check sits on the miss path
/// only: a class's cache stays empty until its `+initialize` returned (nothing is cached for an
/// uninitialized class), so every send to it misses and reaches `ensureInitialized()`, and a
/// cached hit never pays for it.
///
/// A class without a `+initialize` of its own runs its superclass's again, with itself as the
/// receiver (objc4). A `+initialize` that throws still marks the class initialized (objc4's
/// `@finally`): the error reaches the send that triggered it, and later sends proceed.
enum ClassInitialization {
    static let selector = Selector("initialize")

    static let none = 0
    static let running = 1
    static let done = 2

    /// Guards every class's `initializingThread` and the move from `running` to `done`; waiters
    /// sleep on `changed` (objc4's classInitLock monitor).
    nonisolated(unsafe) static let mutex: UnsafeMutablePointer<pthread_mutex_t> = {
        let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(m, nil)
        return m
    }()
    nonisolated(unsafe) static let changed: UnsafeMutablePointer<pthread_cond_t> = {
        let c = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        pthread_cond_init(c, nil)
        return c
    }()

    /// The fork handlers: the monitor is a leaf (nothing is locked under it), taken last. The
    /// child's condition variable is made anew: waiters on it were threads the child has not.
    /// A class whose `+initialize` another thread was running stays `running` in the child, and
    /// a send to it there waits for ever, as in objc4.
    static func atforkPrepare() { pthread_mutex_lock(mutex) }
    static func atforkParent() { pthread_mutex_unlock(mutex) }
    static func atforkChild() {
        pthread_cond_init(changed, nil)
        pthread_mutex_unlock(mutex)
    }
}

extension RuntimeClass {
    /// The class whose `+initialize` state a send to this class's instances (or, for a
    /// metaclass, to the class) depends on: the visible instance class.
    var initializationTarget: RuntimeClass {
        var c = instanceClass
        while c.isHidden, let s = c.superclass { c = s }
        return c
    }

    /// Whether sends to this class may be cached: its `+initialize` has returned.
    @inline(__always)
    var isInitialized: Bool { initializationState.load(ordering: .acquiring) == ClassInitialization.done }

    /// Sends `+initialize` to this class (a visible instance class) and its superclasses if that
    /// has not happened yet, waiting while another thread does it. Returns at once on the
    /// thread already running it (a `+initialize` that sends to its own class).
    ///
    /// - Throws: the error the class's (or a superclass's) `+initialize` threw, once.
    func ensureInitialized() throws(RuntimeError) {
        if isInitialized { return }
        // An unregistered class cannot have instances yet; it is initialized once registered.
        guard Runtime.state.lock.withLock({ isRegistered && !isDisposed }) else { return }
        if let superclass { try superclass.ensureInitialized() }
        let me = pthread_self()
        let m = ClassInitialization.mutex
        pthread_mutex_lock(m)
        while true {
            let state = initializationState.load(ordering: .acquiring)
            if state == ClassInitialization.done {
                pthread_mutex_unlock(m)
                return
            }
            if state == ClassInitialization.running {
                if let t = initializingThread, pthread_equal(t, me) != 0 {
                    pthread_mutex_unlock(m)
                    return
                }
                pthread_cond_wait(ClassInitialization.changed, m)
                continue
            }
            initializationState.store(ClassInitialization.running, ordering: .releasing)
            initializingThread = me
            break
        }
        pthread_mutex_unlock(m)
        var failure: RuntimeError?
        do throws(RuntimeError) {
            try sendInitialize()
        } catch {
            failure = error
        }
        pthread_mutex_lock(m)
        initializingThread = nil
        initializationState.store(ClassInitialization.done, ordering: .releasing)
        pthread_cond_broadcast(ClassInitialization.changed)
        pthread_mutex_unlock(m)
        if let failure { throw failure }
    }

    /// Sends `+initialize` if the metaclass chain implements it (no forwarding: a class that
    /// implements none is simply marked initialized).
    private func sendInitialize() throws(RuntimeError) {
        let implemented = Runtime.state.lock.withLock { metaclass.findMethod(ClassInitialization.selector) != nil }
        guard implemented else { return }
        try ObjectRef(sf_class_as_object(raw)).send(ClassInitialization.selector, as: Void.self)
    }
}
