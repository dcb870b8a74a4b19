import CShims
import Glibc

/// Installs and removes hooks. All changes happen under the runtime lock; senders see either
/// the old or the new table entry and chain, never a torn one.
enum HookRegistry {
    nonisolated(unsafe) private static var nextID: UInt64 = 1
    private static let installDeallocHandler: Void = {
        HiddenClassRegistry.onObjectDeallocated = { obj, hidden in HookRegistry.objectDeallocated(obj, hidden) }
    }()

    typealias Body = (HookContext) throws(RuntimeError) -> Void

    static func add(on cls: RuntimeClass, _ selector: Selector, _ position: HookPosition,
                    expecting types: String?, _ body: @escaping Body) throws(RuntimeError) -> HookToken {
        if Forwarding.reserved.contains(selector) {
            throw .reservedSelector(.init(className: cls.visibleName, selector: selector.name, reason: "it drives forwarding itself; define the method instead of hooking it"))
        }
        try cls.checkReserved(selector)
        let expected = try types.map { (t: String) throws(RuntimeError) -> Signature in try Signature(t) }
        return try Runtime.state.lock.withLock { () throws(RuntimeError) -> HookToken in
            guard !cls.isDisposed else { throw .hookFailed(.init(className: cls.visibleName, selector: selector.name, reason: "the class was disposed")) }
            if cls.isHidden, cls.hiddenObject == nil {
                throw .hookFailed(.init(className: cls.visibleName, selector: selector.name, reason: "the object was deallocated"))
            }
            guard let method = cls.findMethod(selector) else {
                throw .hookFailed(.init(className: cls.visibleName, selector: selector.name, reason: "\(cls.isMetaclass ? "the class does" : "instances do") not respond to it"))
            }
            if let expected, !expected.isCompatible(with: method.signature) {
                throw .signatureMismatch(.init(className: cls.visibleName, selector: selector.name, operation: "the hook", expected: method.signature.encoding, actual: expected.encoding))
            }
            let hook = try installedHook(cls, method)
            let id = nextID
            nextID += 1
            hook.publish(hook.chain.adding(HookChain.Entry(id: id, body: body), at: position))
            return HookToken(id: id, hook: hook, position: position)
        }
    }

    /// The hook for `cls`'s entry of `method`, installing the trampoline if needed (lock held).
    private static func installedHook(_ cls: RuntimeClass, _ method: MethodRecord) throws(RuntimeError) -> MethodHook {
        Runtime.state.lock.assertHeld()
        if method.owningClass === cls, let hook = method.hook { return hook }
        if method.owningClass === cls {
            let hook = try MethodHook(cls: cls, selector: method.selector, signature: method.signature,
                                      inherited: false, original: method.imp)
            hook.record = method
            _ = method.exchange(with: hook.trampoline.imp)
            method.hook = hook
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
        let removed = Runtime.state.lock.withLock { () -> Bool in
            let hook = token.hook
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
            guard hook.contains(token.id) else { return false }
            let chain = hook.chain.removing(token.id)
            hook.publish(chain)
            if chain.isEmpty { uninstall(hook) }
            return true
        }
        Runtime.state.collectGarbage()
        return removed
    }

    /// Puts the original back exactly (lock held).
    private static func uninstall(_ hook: MethodHook) {
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
        // A hidden per-object class stays the object's isa when its last hook goes: it has no
        // methods left, so sends find the class's own, and it is reused by the next hook.
        // Deallocation tears it down.
    }

    /// The object's hidden subclass, created on first use, installed as its isa. Found through
    /// the isa, never by address: a new object at a dead one's address starts with its own class.
    static func hiddenClass(for obj: sf_id) throws(RuntimeError) -> RuntimeClass {
        _ = installDeallocHandler
        guard sf_object_flags(obj) & UInt32(SF_OBJ_IMMORTAL) == 0 else {
            throw .hookFailed(.init(className: Forwarding.visibleClassName(of: obj), expected: "an instance", actual: "a class object (hook the metaclass for class methods)"))
        }
        if let existing = try Runtime.state.lock.withLock({ () throws(RuntimeError) in try installedHiddenClass(obj) }) {
            return existing
        }
        let visible = RuntimeClass.from(sf_object_getClass(obj)!)
        let name = "\(visible.name)#hooked@\(UInt(bitPattern: obj))"
        let hidden = try RuntimeClass(unregisteredName: name, superclass: visible, hidden: true)
        hidden.register()
        let result = Runtime.state.lock.withLock { () -> Result<RuntimeClass, RuntimeError> in
            do throws(RuntimeError) {
                if let raced = try installedHiddenClass(obj) { return .success(raced) }
            } catch {
                return .failure(error)
            }
            hidden.hiddenObject = obj
            sf_object_set_isa(obj, hidden.raw)
            return .success(hidden)
        }
        // Lost a race (or the object started deallocating): nothing points at ours.
        if case .success(let c) = result, c === hidden { return hidden }
        try? hidden.dispose()
        return try result.get()
    }

    /// The object's hidden class if its isa is one (lock held). A deallocating object gets
    /// none: its teardown has already decided what to dispose.
    private static func installedHiddenClass(_ obj: sf_id) throws(RuntimeError) -> RuntimeClass? {
        Runtime.state.lock.assertHeld()
        let isa = sf_object_isa(obj)!
        guard sf_object_flags(obj) & UInt32(SF_OBJ_DEALLOCATING) == 0 else {
            throw .hookFailed(.init(className: Forwarding.visibleClassName(of: obj), expected: "a live object", actual: "an object being deallocated"))
        }
        guard sf_class_info(isa) & UInt32(SF_CLASS_HIDDEN) != 0 else { return nil }
        let hidden = RuntimeClass.from(isa)
        precondition(hidden.hiddenObject == obj, "a hidden class installed on an object it was not made for")
        return hidden
    }

    /// The object is going: drop its hooks and its hidden class.
    static func objectDeallocated(_ obj: sf_id, _ hidden: RuntimeClass) {
        Runtime.state.lock.withLock {
            hidden.hiddenObject = nil
            for record in hidden.methods.values {
                if let hook = record.hook {
                    hook.publish(HookChain())
                    uninstall(hook)
                }
            }
        }
        try? hidden.dispose()
    }
}
