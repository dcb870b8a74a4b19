import CDynamicRuntime
import Glibc

extension RuntimeClass {
    /// Destroys the class and its metaclass, freeing their methods and closures.
    ///
    /// - Throws: `RuntimeError.classInUse` while instances or subclasses exist, and for a
    ///   small-object class (registered for good).
    public func dispose() throws(RuntimeError) {
        guard !isMetaclass else {
            throw .invalidArgument(.init(className: name, operation: "dispose", expected: "a class", actual: "a metaclass"))
        }
        try Runtime.state.lock.withLock { () throws(RuntimeError) in
            guard !isDisposed else { throw .classInUse(.init(className: name, reason: "already disposed")) }
            if let tag = smallObjectTag { throw .classInUse(.init(className: name, reason: "registered as the small-object class of tag \(tag)")) }
            let live = sf_class_live_instances(raw)
            if live > 0 { throw .classInUse(.init(className: name, reason: "\(live) instance(s) still alive")) }
            // The hidden subclass instances with hooks of their own share goes with the class.
            let hidden = objectHookClass
            let subs = subclasses.filter { $0 !== metaclass && $0 !== hidden }
            if !subs.isEmpty {
                throw .classInUse(.init(className: name, reason: "subclass(es) \(subs.map(\.name).joined(separator: ", ")) still exist"))
            }
            let meta = metaclass
            let metaSubs = meta.subclasses.filter { $0 !== hidden?.metaclass }
            if !metaSubs.isEmpty {
                throw .classInUse(.init(className: name, reason: "subclass(es) \(metaSubs.map(\.name).joined(separator: ", ")) still exist"))
            }
            isDisposed = true
            let key = NameKey(cString: sf_class_getName(raw))
            if !isHidden, Runtime.state.classesByName[key] === self { Runtime.state.classesByName[key] = nil }
            for alias in aliasKeys where Runtime.state.classAliases[alias] === self { Runtime.state.classAliases[alias] = nil }
            aliasKeys = []
            superclass?.subclasses.removeAll { $0 === self }
            meta.lookupSuperclass?.subclasses.removeAll { $0 === meta }
            var doomed = [self, meta]
            if let hidden {
                hidden.isDisposed = true
                subclasses.removeAll { $0 === hidden }
                meta.subclasses.removeAll { $0 === hidden.metaclass }
                objectHookClass = nil
                doomed += [hidden, hidden.metaclass]
            }
            // Readers may still be inside this class's cache or methods: free after a grace period.
            let freed = doomed
            Runtime.state.retire {
                for c in freed { c.releaseStorage() }
            }
        }
        Runtime.state.collectGarbage()
    }

    private func releaseStorage() {
        // The class object's associations go with it, as an instance's go at dealloc. (Runs
        // from collectGarbage, outside the lock: a release may deallocate and re-enter.)
        if let side = sf_object_side(sf_class_as_object(raw)) {
            ObjectWord<ObjectSideTable>(side).take().releaseAssociations()
        }
        // A hook still installed here holds its record and the record its hook: break the
        // cycle so the trampoline is freed with the class.
        for m in methods.values {
            m.hook?.trampoline = nil
            m.hook?.record = nil
            m.hook = nil
        }
        methods = [:]  // each record frees its C entry when the last reference goes
        keptAlive = []
        subclasses = []
        sf_cache_destroy(raw)
        if let namePtr = sf_class_getName(raw) { free(UnsafeMutableRawPointer(mutating: namePtr)) }
        _metaclass = nil
    }
}
