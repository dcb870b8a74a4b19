import CDynamicRuntime
import Glibc

/// Process-wide runtime state: the class registry, the writers' lock and deferred frees.
///
/// Readers (message sends) never take `lock`; they read the per-class caches lock-free and
/// fall back to `lookUpMethod`, which does.
@usableFromInline
enum Runtime {
    static let state = RuntimeState()

    /// Makes sure the C layer's slow path and dealloc hook are installed.
    @inline(__always)
    static func ensureInitialized() {
        _ = state
    }
}

extension Runtime {
    /// Objects allocated and not yet deallocated (for leak checks).
    static var liveObjectCount: Int { Int(sf_counter_objects()) }
    /// libffi closures allocated and not yet freed (for leak checks).
    static var liveClosureCount: Int { Int(sf_counter_closures()) }
}
