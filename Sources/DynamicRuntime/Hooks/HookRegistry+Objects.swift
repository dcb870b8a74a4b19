import CShims

extension HookRegistry {
    /// Adds a hook of `obj`'s own: it runs for this object only, merged with its class's hooks.
    static func addObjectHook(_ obj: sf_id, _ selector: Selector, _ position: HookPosition, expecting types: String?,
                              once: Bool = false, _ body: @escaping Body) throws(RuntimeError) -> HookToken {
        let hidden = try hiddenClass(for: obj)
        return try add(on: hidden, selector, position, expecting: types, once: once, body)
    }

    /// `obj`'s own hooks on `selector` (every selector when nil).
    static func objectHooks(_ obj: sf_id, _ selector: Selector?) -> [HookDescription] {
        Runtime.state.lock.withLock {
            guard let hidden = try? installedHiddenClass(obj) else { return [] }
            return classHooks(hidden, selector)
        }
    }

    /// Removes `obj`'s own hook `id`.
    static func removeObjectHook(_ obj: sf_id, _ id: UInt64) -> Bool {
        let hook = Runtime.state.lock.withLock { () -> MethodHook? in
            guard let hidden = try? installedHiddenClass(obj) else { return nil }
            return classHook(hidden, containing: id)
        }
        guard let hook else { return false }
        return remove(id, from: hook)
    }
}
