import CDynamicRuntime

/// Class aliases (libobjc2's `class_registerAlias_np`): other names a class is found by.
extension RuntimeClass {
    /// Registers `alias` as another name of this class: from then on `RuntimeClass.named(_:)`
    /// (and `sf_getClass`, `sf_lookUpClass`, `sf_getMetaClass` from C) find this class by it.
    /// The class keeps its own name (`name`, `sf_class_getName`), class lists show it once,
    /// and `dispose()` removes its aliases with it. The alias counts as a class name taken:
    /// allocating a class of that name is refused. Hooks waiting for the alias
    /// (`hook(whenRegistered:_:_:options:expecting:_:)`) go on this class before this returns.
    ///
    /// - Throws: `duplicateClass` when a class has that name or it is an alias already (of any
    ///   class); `classNotRegistered` for a class not registered yet, or disposed;
    ///   `invalidArgument` for a metaclass or an empty name, or one with a NUL.
    public func registerAlias(_ alias: String) throws(RuntimeError) {
        try registerAlias(key: NameKey(alias))
    }

    /// `key` is the alias's exact bytes (a C name).
    func registerAlias(key: NameKey) throws(RuntimeError) {
        let alias = key.displayName
        guard !isMetaclass, !isHidden else {
            throw .invalidArgument(.init(className: visibleName, operation: "register the alias '\(alias)'", expected: "a class", actual: isMetaclass ? "a metaclass" : "the private subclass of objects with hooks"))
        }
        if alias.isEmpty || key.containsNUL {
            throw .invalidArgument(.init(className: name, operation: "register an alias", expected: "a name, non-empty and without NUL", actual: "\"\(alias)\""))
        }
        var failedHooks: [HookRegistry.Body] = []
        defer { withExtendedLifetime(failedHooks) {} }
        try Runtime.state.lock.withLock { () throws(RuntimeError) in
            guard isRegistered, !isDisposed else {
                throw .classNotRegistered(.init(className: name, operation: "register the alias '\(alias)'"))
            }
            if let owner = Runtime.state.classesByName[key] {
                throw .duplicateClass(.init(className: alias, reason: owner === self ? "it is the class's own name" : "it cannot become an alias of '\(name)'"))
            }
            if let aliased = Runtime.state.classAliases[key] {
                throw .duplicateClass(.init(className: alias, reason: "it is an alias of class '\(aliased.name)' already"))
            }
            Runtime.state.classAliases[key] = self
            aliasKeys.append(key)
            // Hooks waiting for the alias go on before anyone can find the class by it.
            failedHooks = HookRegistry.installPending(named: key, on: self)
        }
    }
}
