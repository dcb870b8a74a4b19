import CDynamicRuntime

/// Stage 1, the resolver, with objc4's caching: a selector the resolver declined is cached
/// as declined in the receiver's class, so later misses go straight to stage 2 without asking
/// again, until the class's (or a superclass's) methods change and flush the cache.
/// Introspection (`responds(to:)`, `methodImplementation(for:)`) asks the resolver too.
extension Forwarding {
    /// Asks the class (or, for class methods, the metaclass) to add the method; true when a
    /// method for `selector` exists afterwards. `raw` is the receiver (for a class method, the
    /// class object); `cls` its isa.
    @inline(__always)
    static func resolve(_ raw: sf_id, _ selector: Selector, _ cls: sf_class_t) throws(RuntimeError) -> Bool {
        if sf_cache_resolver_declined(cls, selector.raw) { return false }
        return try askResolver(raw, selector, cls)
    }

    @inline(never)
    private static func askResolver(_ raw: sf_id, _ selector: Selector, _ cls: sf_class_t) throws(RuntimeError) -> Bool {
        let isMeta = sf_class_info(cls) & UInt32(SF_CLASS_META) != 0
        let resolver = isMeta ? resolveClassMethod : resolveInstanceMethod
        // The class object receives the resolver; for a class method the receiver is that class.
        // An object with per-object hooks has a hidden subclass as its isa: ask its visible class,
        // so that what the resolver adds serves every instance (the hidden class's cache is
        // flushed with its superclass's, so the retry finds it).
        let visible: sf_class_t = sf_class_visible(cls)
        let classObject: sf_id = isMeta ? raw : sf_class_as_object(visible)
        if implements(sf_object_isa(classObject), resolver) {
            let added: Bool = try ObjectRef(classObject).send(resolver, selector)
            if added, sf_lookup_method(cls, selector.raw) != nil { return true }
        }
        RuntimeClass.from(cls).cacheResolverDeclined(selector)
        return false
    }

    /// The resolver for introspection, which has a class and no receiver: whether a method for
    /// `selector` exists in `cls` after asking. An error the resolver throws counts as a no.
    static func resolveForLookup(_ cls: sf_class_t, _ selector: Selector) -> Bool {
        let c = RuntimeClass.from(cls)
        let receiver = sf_class_as_object(c.isMetaclass ? c.instanceClass.raw : c.raw)!
        guard sf_forward_depth_enter() <= maximumDepth else {
            sf_forward_depth_exit()
            return false
        }
        defer { sf_forward_depth_exit() }
        do {
            return try resolve(receiver, selector, cls)
        } catch {
            return false
        }
    }
}

extension RuntimeClass {
    /// Caches `selector` as declined by the resolver, unless a method appeared meanwhile
    /// (checked under the lock, which every method change and cache flush takes).
    func cacheResolverDeclined(_ selector: Selector) {
        Runtime.state.lock.withLock {
            guard !isDisposed, initializationTarget.isInitialized, findMethod(selector) == nil else { return }
            sf_cache_insert(raw, selector.raw, sf_declined_method_marker())
        }
    }

    /// A resolver changed: what it declined before may now be added (lock held).
    func resolverChanged() {
        Runtime.state.lock.assertHeld()
        flushCaches()
        if isMetaclass { instanceClass.flushCaches() }
    }
}
