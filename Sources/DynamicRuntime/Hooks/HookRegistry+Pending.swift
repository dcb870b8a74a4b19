import CDynamicRuntime

extension HookRegistry {
    /// Hooks waiting for a class of their name, in the order asked for (lock held). A name's
    /// entry goes when its list empties: a hook leaves on install, failure or removal.
    nonisolated(unsafe) static var pendingHooks: [NameKey: [PendingHook]] = [:]

    /// How many hooks wait, over every name.
    static var pendingHookCount: Int { Runtime.state.lock.withLock { pendingHooks.values.reduce(0) { $0 + $1.count } } }

    static func addPending(key: NameKey, _ selector: Selector, _ position: HookPosition, options: HookOptions,
                           expecting types: String?, native: NativeHookBody? = nil, _ body: @escaping Body,
                           onInstall: (@Sendable (HookToken) -> Void)? = nil) throws(RuntimeError) -> PendingHook {
        let name = key.displayName
        if name.isEmpty || key.containsNUL {
            throw .invalidArgument(.init(selector: selector.name, operation: "hook a class when it is registered",
                                         expected: "a class name, non-empty and without NUL", actual: "\"\(name)\""))
        }
        try checkHookable(selector, className: name)
        let expected = try types.map { (t: String) throws(RuntimeError) -> Signature in try Signature(t) }
        let pending = PendingHook(key: key, selector: selector, position: position, options: options,
                                  expected: expected, body: body, native: native, onInstall: onInstall)
        var failed: Body?
        defer { withExtendedLifetime(failed) {} }
        Runtime.state.lock.withLock {
            if let registered = RuntimeClass.namedLocked(key: key).flatMap({ $0.isDisposed ? nil : $0 }) {
                failed = install(pending, on: registered)
            } else {
                pendingHooks[key, default: []].append(pending)
            }
        }
        return pending
    }

    /// Installs the hooks waiting for `key` on `cls`, which has just become registered under
    /// that name or alias (lock held). Returns the bodies of those that failed, to be released
    /// after the lock.
    static func installPending(named key: NameKey, on cls: RuntimeClass) -> [Body] {
        Runtime.state.lock.assertHeld()
        guard let waiting = pendingHooks.removeValue(forKey: key) else { return [] }
        return waiting.compactMap { install($0, on: cls) }
    }

    /// Installs one waiting hook on `cls` (lock held): afterwards it is installed or failed.
    /// Returns its body if it failed.
    private static func install(_ pending: PendingHook, on cls: RuntimeClass) -> Body? {
        Runtime.state.lock.assertHeld()
        guard case .waiting = pending.current, let body = pending.body else { return nil }
        pending.body = nil
        do {
            let token = try addLocked(on: cls, pending.selector, pending.position, expecting: pending.expected,
                                      once: pending.options.contains(.removeAfterFirstCall), native: pending.native, body)
            pending.current = .installed(token)
            pending.onInstall?(token)
            return nil
        } catch {
            pending.current = .failed(error)
            return body
        }
    }

    /// Takes a hook that is removed while it waits out of the table (lock held).
    static func dropPending(_ pending: PendingHook) {
        Runtime.state.lock.assertHeld()
        guard var list = pendingHooks[pending.key] else { return }
        list.removeAll { $0 === pending }
        pendingHooks[pending.key] = list.isEmpty ? nil : list
    }
}
