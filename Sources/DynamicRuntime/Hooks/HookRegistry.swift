import CDynamicRuntime
import Glibc

/// Installs and removes hooks. All changes happen under the runtime lock; senders see either
/// the old or the new table entry and chain, never a torn one.
enum HookRegistry {
    nonisolated(unsafe) static var nextID: UInt64 = 1
    /// The tokens of hooks that remove themselves after their first call (lock held).
    nonisolated(unsafe) static var oneShotTokens: [UInt64: HookToken] = [:]
    /// What to run when the object of an object's own hook is deallocated, by hook id (lock
    /// held): a message stream ends there, after the object's last message.
    nonisolated(unsafe) static var objectGoneHandlers: [UInt64: @Sendable () -> Void] = [:]
    static let installDeallocHandler: Void = {
        HiddenClassRegistry.onObjectDeallocated = { obj, hidden in HookRegistry.objectDeallocated(obj, hidden) }
    }()

    typealias Body = @Sendable (HookContext) throws -> Void

    static func add(on cls: RuntimeClass, _ selector: Selector, _ position: HookPosition,
                    expecting types: String?, once: Bool = false, native: NativeHookBody? = nil,
                    _ body: @escaping Body) throws(RuntimeError) -> HookToken {
        try checkHookable(selector, className: cls.visibleName)
        let expected = try types.map { (t: String) throws(RuntimeError) -> Signature in try Signature(t) }
        return try Runtime.state.lock.withLock { () throws(RuntimeError) -> HookToken in
            try addLocked(on: cls, selector, position, expecting: expected, once: once, native: native, body)
        }
    }

    /// Refuses the selectors no hook may take, whatever the class.
    static func checkHookable(_ selector: Selector, className: String) throws(RuntimeError) {
        if Forwarding.reserved.contains(selector) {
            throw .reservedSelector(.init(className: className, selector: selector.name, reason: "it drives forwarding itself; define the method instead of hooking it"))
        }
        try RuntimeClass.checkReserved(selector, className: className)
    }

    /// `add` once the selector is known hookable and the types parsed (lock held).
    static func addLocked(on cls: RuntimeClass, _ selector: Selector, _ position: HookPosition,
                          expecting expected: Signature?, once: Bool, native: NativeHookBody? = nil,
                          _ body: @escaping Body) throws(RuntimeError) -> HookToken {
        Runtime.state.lock.assertHeld()
        guard !cls.isDisposed else { throw .hookFailed(.init(className: cls.visibleName, selector: selector.name, reason: "the class was disposed")) }
        let method = try hookedMethod(cls, selector, visibleName: cls.visibleName, expecting: expected)
        let hook = try installedHook(cls, method)
        let id = nextID
        nextID += 1
        guard hook.chain.hasRoom(at: position) else {
            throw .hookFailed(.init(className: cls.visibleName, selector: selector.name, operation: "add a hook",
                                    expected: "at most \(HookChain.capacity) hooks at one position", actual: "\(HookChain.capacity + 1)"))
        }
        hook.publish(hook.chain.adding(HookChain.Entry(id: id, body: body, native: native, once: once ? OnceClaim() : nil), at: position))
        let token = HookToken(id: id, hook: hook, position: position)
        if once { oneShotTokens[id] = token }
        return token
    }

    /// `selector`'s method as `cls` finds it, checked against the types the hook expects (lock held).
    static func hookedMethod(_ cls: RuntimeClass, _ selector: Selector, visibleName: String,
                             expecting expected: Signature?) throws(RuntimeError) -> MethodRecord {
        guard let method = cls.findMethod(selector) else {
            throw .hookFailed(.init(className: visibleName, selector: selector.name, reason: "\(cls.isMetaclass ? "the class does" : "instances do") not respond to it"))
        }
        if let expected, !expected.isCompatible(with: method.signature) {
            throw .signatureMismatch(.init(className: visibleName, selector: selector.name, operation: "the hook", expected: method.signature.encoding, actual: expected.encoding))
        }
        return method
    }

    /// The hook for `cls`'s entry of `method`, installing the trampoline if needed (lock held).
    static func installedHook(_ cls: RuntimeClass, _ method: MethodRecord) throws(RuntimeError) -> MethodHook {
        Runtime.state.lock.assertHeld()
        if method.owningClass === cls, let hook = method.hook { return hook }
        if method.owningClass === cls {
            let hook = try MethodHook(cls: cls, selector: method.selector, signature: method.signature,
                                      inherited: false, original: method.imp)
            hook.record = method
            _ = method.exchange(with: hook.trampoline.imp)
            method.hook = hook
            // Per-object entries below merge their chains after this hook's from now on.
            cls.resolveHiddenHooks()
            return hook
        }
        // Inherited: give this class its own entry so the superclass is left untouched.
        let hook = try MethodHook(cls: cls, selector: method.selector, signature: method.signature,
                                  inherited: true, original: method.imp)
        let record = MethodRecord(selector: method.selector, signature: method.signature, imp: hook.trampoline.imp, in: cls)
        record.hook = hook
        hook.record = record
        cls.methods[method.selector] = record
        cls.flushCaches()
        return hook
    }

    static func remove(_ token: HookToken) -> Bool {
        if let side = token.side { return removeObjectHook(side, token.id) }
        return remove(token.id, from: token.hook)
    }

    /// Removes hook `id` from `hook`'s chain, uninstalling the entry when it was the last.
    static func remove(_ id: UInt64, from hook: MethodHook) -> Bool {
        var oneShot: HookToken?
        defer { withExtendedLifetime(oneShot) {} }
        let removed = Runtime.state.lock.withLock { () -> Bool in
            oneShot = oneShotTokens.removeValue(forKey: id)
            guard let record = hook.record, record.hook === hook else { return false }
            guard hook.isInTable else {
                // The class (or, for a class-method hook, its class) was disposed: the table entry
                // the trampoline sat in is freed, so there is nothing to restore and it must not
                // be written. Break the record <-> hook cycle so the trampoline can go, after a
                // grace period (a late send may still be inside it).
                record.hook = nil
                Runtime.state.retire { hook.trampoline = nil }
                return false
            }
            guard hook.contains(id) else { return false }
            let chain = hook.chain.removing(id)
            hook.publish(chain)
            if chain.isEmpty { uninstall(hook) }
            return true
        }
        Runtime.state.collectGarbage()
        return removed
    }

    /// Removes a one-shot hook once its first call ran it (its C token goes too).
    static func removeAfterFirstCall(_ id: UInt64) {
        guard let token = Runtime.state.lock.withLock({ oneShotTokens.removeValue(forKey: id) }) else { return }
        token.remove()
        CHooks.forget(id)
    }

    /// Puts the original back exactly (lock held).
    static func uninstall(_ hook: MethodHook) {
        Runtime.state.lock.assertHeld()
        let cls = hook.cls
        let record = hook.record!
        record.hook = nil
        if hook.inherited {
            cls.methods[hook.selector] = nil
            cls.flushCaches()
            // The record is freed in its deinit (a `Method` value may outlive it); dropping its
            // owner lets go of the trampoline, which holds the hook, which holds the record.
            Runtime.state.retire { record.dropOwner() }
        } else {
            _ = record.exchange(with: hook.original!)
        }
        // The trampoline holds its hook (a replayed invocation may still enter it): drop the
        // hook's side of the cycle once no sender can be inside.
        Runtime.state.retire { hook.trampoline = nil }
    }
}
