import CDynamicRuntime

/// `class_setSuperclass`, made safe: instances are laid out by their class chain, so the
/// chain may only change while no instance of the class or its subclasses exists, and only to
/// a superclass whose instances fit where the old one's ended.
extension RuntimeClass {
    /// Makes `newSuperclass` this class's superclass (and its metaclass's the new one's
    /// metaclass), flushes the caches of both subtrees, and returns the previous superclass.
    ///
    /// - Throws: `incompatibleClass` while the class or a subclass has live instances, for a
    ///   cycle, for a root class or a superclass from another
    ///   root hierarchy (their metaclasses would keep the wrong root metaclass), when the new
    ///   superclass's instances are larger or more aligned than the space the old one left,
    ///   or when an ivar name would then appear twice in the chain. `invalidArgument` for a
    ///   metaclass, a hidden class or an unregistered new superclass.
    @discardableResult
    public func setSuperclass(_ newSuperclass: RuntimeClass) throws(RuntimeError) -> RuntimeClass {
        guard !isMetaclass, !newSuperclass.isMetaclass else {
            throw .invalidArgument(.init(className: name, operation: "setSuperclass", expected: "a class", actual: "a metaclass (its superclass follows its class's)"))
        }
        guard !isHidden, !newSuperclass.isHidden else {
            throw .invalidArgument(.init(className: name, operation: "setSuperclass", expected: "an ordinary class", actual: "a per-object hook class"))
        }
        return try Runtime.state.lock.withLock { () throws(RuntimeError) -> RuntimeClass in
            func refuse(_ reason: String) -> RuntimeError {
                .incompatibleClass(.init(className: name, target: newSuperclass.name, reason: "cannot become its superclass: " + reason))
            }
            guard newSuperclass.isRegistered, !newSuperclass.isDisposed, !isDisposed else {
                throw .classNotRegistered(.init(className: newSuperclass.name, operation: "make it a superclass"))
            }
            guard let old = superclass else { throw refuse("'\(name)' is a root class") }
            if old === newSuperclass { return old }
            var c: RuntimeClass? = newSuperclass
            while let k = c {
                if k === self { throw refuse("'\(newSuperclass.name)' is '\(name)' or one of its subclasses") }
                c = k.superclass
            }
            guard newSuperclass.rootClass === old.rootClass else {
                throw refuse("its root class is '\(newSuperclass.rootClass.name)', not '\(old.rootClass.name)'")
            }
            // Objects with per-object hooks are counted in their visible class; a hook class
            // left without objects keeps this class as its superclass and follows it.
            let subtree = subtreeNolock()
            let live = subtree.reduce(0) { $0 + sf_class_live_instances($1.raw) }
            if live > 0 { throw refuse("\(live) instance(s) of '\(name)' or its subclasses are alive") }
            let room = old.instanceSize
            if newSuperclass.instanceSize > room {
                throw refuse("its instances are \(newSuperclass.instanceSize) bytes; '\(name)' lays out its ivars from byte \(room)")
            }
            if newSuperclass.instanceAlignment > instanceAlignment {
                throw refuse("its ivars need \(newSuperclass.instanceAlignment)-byte alignment, '\(name)' has \(instanceAlignment)")
            }
            var inherited = Set<String>()
            c = newSuperclass
            while let k = c {
                inherited.formUnion(k.ivarList.map(\.name))
                c = k.superclass
            }
            for k in subtree {
                if let clash = k.ivarList.first(where: { inherited.contains($0.name) }) {
                    throw refuse("'\(k.name)' and the new chain both declare an ivar named '\(clash.name)'")
                }
            }
            relinkNolock(from: old, to: newSuperclass)
            return old
        }
    }

    /// This class and every class below it (lock held).
    private func subtreeNolock() -> [RuntimeClass] {
        Runtime.state.lock.assertHeld()
        var all = [self]
        var i = 0
        while i < all.count {
            all.append(contentsOf: all[i].subclasses)
            i += 1
        }
        return all
    }

    private func relinkNolock(from old: RuntimeClass, to new: RuntimeClass) {
        Runtime.state.lock.assertHeld()
        let meta = metaclass
        old.subclasses.removeAll { $0 === self }
        new.subclasses.append(self)
        old.metaclass.subclasses.removeAll { $0 === meta }
        new.metaclass.subclasses.append(meta)
        superclass = new
        sf_class_set_super(raw, new.raw)
        meta.superclass = new.metaclass
        meta.metaSuperclass = new.metaclass
        sf_class_set_super(meta.raw, new.metaclass.raw)
        // Strong and weak ivar offsets are inherited: recompute them down the tree.
        for k in subtreeNolock() {
            let own = k.ivarList.filter { !$0.isWeak }.flatMap { ivar in ivar.type.strongObjectOffsets.map { ivar.offset + $0 } }
            k.objectIvarOffsets = (k.superclass?.objectIvarOffsets ?? []) + own
            k.weakIvarOffsets = (k.superclass?.weakIvarOffsets ?? []) + k.ivarList.filter(\.isWeak).map(\.offset)
        }
        // Every cached lookup and declined-resolver answer below either class may have changed.
        flushCaches()
        meta.flushCaches()
    }
}
