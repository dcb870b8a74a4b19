import CDynamicRuntime
import Glibc

final class RuntimeState: @unchecked Sendable {
    let lock = RuntimeLock()
    var classesByName: [NameKey: RuntimeClass] = [:]
    /// Other names classes answer to (`registerAlias`); never a name of `classesByName`.
    var classAliases: [NameKey: RuntimeClass] = [:]
    init() {
        sf_rcu_init()
        sf_install_slow_path(lookUpMethodEntry)
        sf_install_dealloc_hook(deallocateEntry)
        sf_install_root_dealloc(RootDealloc.imp, RootDealloc.selector.raw)
        ForkSafety.install(runtimeLock: lock)
        sf_install_forward_target(forwardTargetEntry)
        sf_install_stage_selectors(Forwarding.forwardingTarget.raw, Forwarding.methodSignature.raw,
                                   Forwarding.forwardInvocation.raw)
    }

    /// Releases a +1 reference once no reader can reach it: call with `lock` held, after
    /// unpublishing it. (One entry on the retired list, no allocation of Swift's own.)
    func retire<T>(releasing object: ObjectWord<T>) {
        lock.assertHeld()
        sf_retire(object.pointer, releaseRetired)
    }

    /// Runs `free` once no reader can reach what it frees: call with `lock` held, after
    /// unpublishing. It runs outside the lock, so it may release anything.
    func retire(_ free: @escaping () -> Void) {
        lock.assertHeld()
        sf_retire(ObjectWord(retaining: RetiredAction(free)).pointer, runRetired)
    }

    /// Frees what no reader can reach any more. Call without `lock` held. Costs the items freed
    /// plus one, however many are still waiting for a reader.
    func collectGarbage() {
        lock.assertNotHeld("collectGarbage runs frees that may take the runtime lock")
        let ready = lock.withLock { sf_retired_take_ready() }
        // Frees may release Swift closures whose captures run arbitrary deinit code.
        sf_retired_free(ready)
    }

    /// Items on the retired list, waiting for readers to leave.
    var retiredCount: Int { lock.withLock { sf_retired_pending() } }
}

/// A deferred free that needs Swift code.
private final class RetiredAction {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

private let releaseRetired: sf_retire_fn = { item in
    ObjectWord<AnyObject>(item!).release()
}

private let runRetired: sf_retire_fn = { item in
    ObjectWord<RetiredAction>(item!).take().run()
}

/// The slow path the C fast path calls on a cache miss. `+initialize` is sent here: an
/// uninitialized class caches nothing, so its first send (and every send until `+initialize`
/// returns) comes this way. A failed `+initialize` reads as a miss, its error pending for the
/// Swift sender and recorded for a C one.
private let lookUpMethodEntry: sf_lookup_slow_fn = { cls, sel in
    guard let cls, let sel else { return nil }
    let c = RuntimeClass.from(cls)
    let target = c.initializationTarget
    if !target.isInitialized {
        do throws(RuntimeError) {
            try target.ensureInitialized()
            succeed()
        } catch {
            Runtime.raise(error)
            error.record()
            return nil
        }
    }
    return c.lookUpAndCache(Selector(raw: sel))
}

private let deallocateEntry: sf_dealloc_hook_fn = { obj in
    guard let obj else { return }
    ObjectLifecycle.deallocate(obj)
}
