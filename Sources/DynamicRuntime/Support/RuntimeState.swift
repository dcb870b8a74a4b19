import CShims
import Glibc

final class RuntimeState: @unchecked Sendable {
    let lock = RuntimeLock()
    var classesByName: [NameKey: RuntimeClass] = [:]
    /// Things unpublished by writers, freed once no reader can still reach them.
    private var graveyard: [(tag: UInt64, free: () -> Void)] = []

    init() {
        sf_rcu_init()
        sf_install_slow_path(lookUpMethodEntry)
        sf_install_dealloc_hook(deallocateEntry)
        ForkSafety.install(runtimeLock: lock)
        sf_install_forward_target(forwardTargetEntry)
    }

    /// Called with `lock` held, after the item is unreachable for new readers.
    func retire(_ free: @escaping () -> Void) {
        graveyard.append((sf_rcu_retire_tag(), free))
    }

    /// Frees what no reader can reach any more. Call without `lock` held.
    func collectGarbage() {
        var ready: [() -> Void] = []
        lock.withLock {
            _ = sf_cache_collect()
            guard !graveyard.isEmpty else { return }
            let oldest = sf_rcu_oldest_reader()
            var kept: [(tag: UInt64, free: () -> Void)] = []
            for item in graveyard {
                if item.tag < oldest { ready.append(item.free) } else { kept.append(item) }
            }
            graveyard = kept
        }
        // Frees may release Swift closures whose captures run arbitrary deinit code.
        for free in ready { free() }
    }

    var retiredCount: Int { lock.withLock { graveyard.count } }
}

/// The slow path the C fast path calls on a cache miss.
private let lookUpMethodEntry: sf_lookup_slow_fn = { cls, sel in
    guard let cls, let sel else { return nil }
    return RuntimeClass.from(cls).lookUpAndCache(Selector(raw: sel))
}

private let deallocateEntry: sf_dealloc_hook_fn = { obj in
    guard let obj else { return }
    ObjectLifecycle.deallocate(obj)
}
