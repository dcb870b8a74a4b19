import CDynamicRuntime
import Glibc

extension RuntimeClass {
    func findMethod(_ selector: Selector) -> MethodRecord? {
        var c: RuntimeClass? = self
        while let k = c {
            if let m = k.methods[selector] { return m }
            c = k.lookupSuperclass
        }
        // Every instance chain ends in the root dealloc.
        return !isMetaclass && selector == RootDealloc.selector ? RootDealloc.record : nil
    }

    /// The slow path: walk the chain under the lock and fill this class's cache.
    func lookUpAndCache(_ selector: Selector) -> sf_method_t? {
        // Nothing is cached before `+initialize` returned: the next send must miss again.
        let cacheable = initializationTarget.isInitialized
        return Runtime.state.lock.withLock {
            guard let m = findMethod(selector) else {
                // Remember the miss: the next send forwards without taking the lock.
                let marker = sf_forward_method_marker()
                if cacheable { sf_cache_insert(raw, selector.raw, marker) }
                return marker
            }
            if cacheable { sf_cache_insert(raw, selector.raw, m.raw) }
            return m.raw
        }
    }

    /// Empties this class's cache and its subclasses' (lock held).
    func flushCaches() {
        Runtime.state.lock.assertHeld()
        sf_cache_flush(raw)
        for s in subclasses { s.flushCaches() }
        // A hidden class's hooked entries keep the visible class's method they run around.
        if isHidden { for record in methods.values { record.hook?.resolveInherited() } }
    }

    /// Re-resolves the hidden entries below this class after one of its methods changed IMP or
    /// hook without a flush (lock held): they hold that method's IMP and hook themselves.
    func resolveHiddenHooks() {
        Runtime.state.lock.assertHeld()
        if isHidden { for record in methods.values { record.hook?.resolveInherited() } }
        for s in subclasses { s.resolveHiddenHooks() }
    }
}
