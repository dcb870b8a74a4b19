import CDynamicRuntime

extension RuntimeClass {
    /// Hooks `selector` for every instance with `options`, e.g. a hook that removes itself after
    /// its first call; otherwise as `hook(_:_:expecting:_:)`.
    @discardableResult
    public func hook(_ selector: Selector, _ position: HookPosition = .before, options: HookOptions,
                     expecting types: String? = nil, _ body: @escaping @Sendable (HookContext) throws -> Void) throws(RuntimeError) -> HookToken {
        try HookRegistry.add(on: self, selector, position, expecting: types,
                             once: options.contains(.removeAfterFirstCall), wrapHookBody(body))
    }

    /// The hooks installed on this class itself (not its superclasses' nor its objects'), per
    /// selector in the order they run: before hooks, instead hooks newest first, after hooks.
    /// For a metaclass: the class-method hooks.
    public func hooks(for selector: Selector? = nil) -> [HookDescription] {
        Runtime.state.lock.withLock { HookRegistry.classHooks(self, selector) }
    }

    /// Removes the hook `identifier` from this class (as its token's `remove()` would).
    /// Returns false when this class has no such hook.
    @discardableResult
    public func removeHook(_ identifier: HookIdentifier) -> Bool {
        guard let hook = Runtime.state.lock.withLock({ HookRegistry.classHook(self, containing: identifier.rawValue) }) else { return false }
        return HookRegistry.remove(identifier.rawValue, from: hook)
    }
}

extension ObjectRef {
    /// Hooks `selector` for this object only, with `options`; otherwise as `hook(_:_:expecting:_:)`.
    @discardableResult
    public func hook(_ selector: Selector, _ position: HookPosition = .before, options: HookOptions,
                     expecting types: String? = nil, _ body: @escaping @Sendable (HookContext) throws -> Void) throws(RuntimeError) -> HookToken {
        guard let raw else { throw .hookFailed(.init(selector: selector.name, expected: "an object", actual: "nil")) }
        return try HookRegistry.addObjectHook(raw, selector, position, expecting: types,
                                              once: options.contains(.removeAfterFirstCall), wrapHookBody(body))
    }

    /// This object's own hooks (not its class's), per selector in the order they run.
    public func hooks(for selector: Selector? = nil) -> [HookDescription] {
        guard let raw else { return [] }
        return HookRegistry.objectHooks(raw, selector)
    }

    /// Removes this object's own hook `identifier`. Returns false when it has no such hook.
    @discardableResult
    public func removeHook(_ identifier: HookIdentifier) -> Bool {
        guard let raw else { return false }
        return HookRegistry.removeObjectHook(raw, identifier.rawValue)
    }
}

extension Object {
    /// Hooks `selector` for this object only, with `options`; see `ObjectRef.hook(_:_:options:expecting:_:)`.
    @discardableResult
    public func hook(_ selector: Selector, _ position: HookPosition = .before, options: HookOptions,
                     expecting types: String? = nil, _ body: @escaping @Sendable (HookContext) throws -> Void) throws(RuntimeError) -> HookToken {
        try ref.hook(selector, position, options: options, expecting: types, body)
    }

    /// This object's own hooks; see `ObjectRef.hooks(for:)`.
    public func hooks(for selector: Selector? = nil) -> [HookDescription] { ref.hooks(for: selector) }

    /// Removes this object's own hook `identifier`; see `ObjectRef.removeHook(_:)`.
    @discardableResult
    public func removeHook(_ identifier: HookIdentifier) -> Bool { ref.removeHook(identifier) }
}

extension HookRegistry {
    /// `cls`'s own hooks on `selector` (every selector when nil), by selector name (lock held).
    static func classHooks(_ cls: RuntimeClass, _ selector: Selector?) -> [HookDescription] {
        Runtime.state.lock.assertHeld()
        return cls.methods.values
            .compactMap { r in r.hook.flatMap { $0.cls === cls && (selector == nil || $0.selector == selector) ? $0 : nil } }
            .sorted { $0.selector.name < $1.selector.name }
            .flatMap { $0.chain.descriptions($0.selector) }
    }

    /// The hook of `cls`'s own entry holding hook `id` (lock held).
    static func classHook(_ cls: RuntimeClass, containing id: UInt64) -> MethodHook? {
        Runtime.state.lock.assertHeld()
        return cls.methods.values.lazy.compactMap { r in r.hook.flatMap { $0.cls === cls && $0.contains(id) ? $0 : nil } }.first
    }
}
