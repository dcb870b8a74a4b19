import CDynamicRuntime

extension RuntimeClass {
    /// A registered copy of this class under a new name (`objc_duplicateClass`): the same
    /// superclass, ivars at the same offsets, and its own copy of the methods, class methods,
    /// protocols and properties as they are now (a hooked method contributes its original, not
    /// the hook). Instances can then be switched between the two with `setClass`, the way KVO
    /// swaps a class under an object. Later changes to either class leave the other alone.
    ///
    /// - Throws: `duplicateClass` if the name is taken, `invalidArgument` for a metaclass or a
    ///   private hook subclass, `classNotRegistered` for a class not registered yet.
    public func duplicate(named newName: String) throws(RuntimeError) -> RuntimeClass {
        try duplicate(named: newName, key: nil)
    }

    /// `key`, when given, is the new name's exact bytes (a C name).
    func duplicate(named newName: String, key: NameKey?) throws(RuntimeError) -> RuntimeClass {
        guard !isMetaclass else {
            throw .invalidArgument(.init(className: name, operation: "duplicate", expected: "a class", actual: "a metaclass"))
        }
        guard !isHidden else {
            throw .invalidArgument(.init(className: visibleName, operation: "duplicate", expected: "a class", actual: "the private subclass of objects with hooks"))
        }
        let registered = Runtime.state.lock.withLock { isRegistered && !isDisposed }
        guard registered else { throw .classNotRegistered(.init(className: name, operation: "duplicate it")) }
        let copy = try RuntimeClass(unregisteredName: newName, key: key, superclass: superclass, hidden: false)
        Runtime.state.lock.withLock {
            copy.ivarList = ivarList
            sf_class_set_instance_size(copy.raw, instanceSize)
            copy.instanceAlignment = instanceAlignment
            copy.objectIvarOffsets = objectIvarOffsets
            copy.weakIvarOffsets = weakIvarOffsets
            copy.adoptedProtocols = adoptedProtocols
            copy.propertyList = propertyList.map { $0.duplicateNolock() }
            copy.metaclass.propertyList = metaclass.propertyList.map { $0.duplicateNolock() }
            copyMethodsNolock(into: copy)
            metaclass.copyMethodsNolock(into: copy.metaclass)
            copy.metaclass.resolverChanged()
        }
        copy.register()
        return copy
    }

    /// Gives `other` a record of its own for each of this class's methods (lock held).
    private func copyMethodsNolock(into other: RuntimeClass) {
        Runtime.state.lock.assertHeld()
        for record in methods.values {
            let imp: IMP
            if let hook = record.hook {
                // An inherited method hooked here: the copy inherits it from the same superclass.
                if hook.inherited { continue }
                imp = hook.currentOriginal()
            } else {
                imp = record.imp
            }
            other.methods[record.selector] = MethodRecord(selector: record.selector, signature: record.signature, imp: imp, in: other)
        }
        other.flushCaches()
    }
}
