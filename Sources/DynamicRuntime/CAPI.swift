import CShims

// The C API's functions that need the Swift runtime. Each failure records its error for
// sf_last_error() and returns NULL / false / a non-zero status; nothing a C caller passes
// traps.

private func fail<T>(_ error: RuntimeError, _ value: T) -> T {
    error.record()
    return value
}

private func succeed() { sf_set_last_error(SF_OK, nil) }

private func nameArg(_ p: UnsafePointer<CChar>?, _ what: String) -> Result<String, RuntimeError> {
    guard let p else { return .failure(.invalidArgument(className: "-", selector: "-", reason: "\(what) is NULL")) }
    return .success(String(cString: p))
}

@_cdecl("sf_allocateClassPair")
func sf_allocateClassPair_impl(_ superclass: sf_class_t?, _ name: UnsafePointer<CChar>?) -> sf_class_t? {
    do {
        let n = try nameArg(name, "class name").get()
        let cls = try RuntimeClass.allocate(name: n, superclass: superclass.map(RuntimeClass.from))
        succeed()
        return cls.raw
    } catch {
        return fail(error, nil)
    }
}

@_cdecl("sf_registerClassPair")
func sf_registerClassPair_impl(_ cls: sf_class_t?) {
    guard let cls else { return }
    RuntimeClass.from(cls).register()
}

@_cdecl("sf_disposeClassPair")
func sf_disposeClassPair_impl(_ cls: sf_class_t?) -> sf_status {
    guard let cls else { return fail(.invalidArgument(className: "-", selector: "-", reason: "class is NULL"), SF_ERR_INVALID_ARGUMENT) }
    do {
        try RuntimeClass.from(cls).dispose()
        succeed()
        return SF_OK
    } catch {
        return fail(error, error.code)
    }
}

@_cdecl("sf_getClass")
func sf_getClass_impl(_ name: UnsafePointer<CChar>?) -> sf_class_t? {
    guard let name else { return nil }
    return RuntimeClass.named(String(cString: name))?.raw
}

@_cdecl("sf_getMetaClass")
func sf_getMetaClass_impl(_ name: UnsafePointer<CChar>?) -> sf_class_t? {
    guard let name else { return nil }
    return RuntimeClass.named(String(cString: name))?.metaclass.raw
}

@_cdecl("sf_class_respondsToSelector")
func sf_class_respondsToSelector_impl(_ cls: sf_class_t?, _ sel: sf_sel?) -> Bool {
    guard let cls, let sel else { return false }
    return RuntimeClass.from(cls).responds(to: Selector(raw: sel))
}

private func methodArgs(_ cls: sf_class_t?, _ sel: sf_sel?, _ imp: sf_imp?,
                        _ types: UnsafePointer<CChar>?) -> Result<(RuntimeClass, Selector, IMP, String), RuntimeError> {
    guard let cls else { return .failure(.invalidArgument(className: "-", selector: "-", reason: "class is NULL")) }
    let c = RuntimeClass.from(cls)
    guard let sel else { return .failure(.invalidArgument(className: c.name, selector: "-", reason: "selector is NULL")) }
    let s = Selector(raw: sel)
    guard let imp else { return .failure(.invalidArgument(className: c.name, selector: s.name, reason: "IMP is NULL")) }
    guard let types else { return .failure(.invalidArgument(className: c.name, selector: s.name, reason: "type encoding is NULL")) }
    return .success((c, s, IMP(imp), String(cString: types)))
}

@_cdecl("sf_class_addMethod")
func sf_class_addMethod_impl(_ cls: sf_class_t?, _ sel: sf_sel?, _ imp: sf_imp?, _ types: UnsafePointer<CChar>?) -> sf_status {
    do {
        let (c, s, i, t) = try methodArgs(cls, sel, imp, types).get()
        try c.addMethod(s, implementation: i, types: t)
        succeed()
        return SF_OK
    } catch {
        return fail(error, error.code)
    }
}

@_cdecl("sf_class_replaceMethod")
func sf_class_replaceMethod_impl(_ cls: sf_class_t?, _ sel: sf_sel?, _ imp: sf_imp?, _ types: UnsafePointer<CChar>?) -> sf_imp? {
    do {
        let (c, s, i, t) = try methodArgs(cls, sel, imp, types).get()
        let old = try c.replaceMethod(s, implementation: i, types: t)
        // A C caller holds a bare pointer: keep a replaced closure alive with its class.
        if let owner = old?.owner { Runtime.state.lock.withLock { c.keptAlive.append(owner) } }
        succeed()
        return old?.pointer
    } catch {
        return fail(error, nil)
    }
}

@_cdecl("sf_method_setImplementation")
func sf_method_setImplementation_impl(_ m: sf_method_t?, _ imp: sf_imp?) -> sf_imp? {
    guard let m, let imp else {
        return fail(.invalidArgument(className: "-", selector: "-", reason: "method or IMP is NULL"), nil)
    }
    return Runtime.state.lock.withLock {
        guard let record = MethodRecord.from(m) else { return nil }
        if let hook = record.hook {
            // As replaceMethod does: the trampoline stays, the hook wraps the new IMP, and
            // unhooking later restores that one.
            let old = hook.original ?? hook.currentOriginal()
            _ = hook.replaceOriginal(with: IMP(imp))
            if let owner = old.owner { record.owningClass.keptAlive.append(owner) }
            return old.pointer
        }
        let old = record.exchange(with: IMP(imp))
        if let owner = old.owner { record.owningClass.keptAlive.append(owner) }
        return old.pointer
    }
}

@_cdecl("sf_method_exchangeImplementations")
func sf_method_exchangeImplementations_impl(_ a: sf_method_t?, _ b: sf_method_t?) {
    guard let a, let b else {
        return fail(.invalidArgument(className: "-", selector: "-", reason: "sf_method_exchangeImplementations: a method is NULL"), ())
    }
    // The checks of RuntimeClass.exchangeImplementations: an IMP must never run with another
    // signature's arguments, and a hook's trampoline must stay where unhooking looks for it.
    let refused = Runtime.state.lock.withLock { () -> RuntimeError? in
        guard let ra = MethodRecord.from(a), let rb = MethodRecord.from(b) else {
            return .invalidArgument(className: "-", selector: "-", reason: "sf_method_exchangeImplementations: not a runtime method")
        }
        guard ra.signature == rb.signature else {
            return .signatureMismatch(className: ra.owningClass.visibleName, selector: rb.selector.name,
                                      expected: ra.signature.encoding, actual: rb.signature.encoding)
        }
        if let hooked = [ra, rb].first(where: { $0.hook != nil }) {
            return .hookFailed(className: hooked.owningClass.visibleName, selector: hooked.selector.name,
                               reason: "remove its hooks before exchanging implementations")
        }
        let impA = ra.imp
        let impB = rb.exchange(with: impA)
        _ = ra.exchange(with: impB)
        return nil
    }
    if let refused { return fail(refused, ()) }
    succeed()
}

@_cdecl("sf_class_addIvar")
func sf_class_addIvar_impl(_ cls: sf_class_t?, _ name: UnsafePointer<CChar>?, _ size: Int,
                           _ log2Alignment: UInt8, _ types: UnsafePointer<CChar>?) -> Bool {
    guard let cls, let name, let types else {
        return fail(.invalidArgument(className: "-", selector: "-", reason: "class, name or types is NULL"), false)
    }
    let c = RuntimeClass.from(cls)
    do throws(RuntimeError) {
        let sig: Signature
        do {
            sig = try Signature("v@:" + String(cString: types))
        } catch let .malformedEncoding(_, offset, reason) {
            // Report the caller's text and offsets, not the method encoding built around it.
            throw RuntimeError.malformedEncoding(encoding: String(cString: types), offset: max(offset - 3, 0), reason: reason)
        }
        guard sig.argumentTypes.count == 3 else {
            throw RuntimeError.malformedEncoding(encoding: String(cString: types), offset: 0, reason: "expected exactly one type")
        }
        let type = sig.argumentTypes[2]
        let actual = Int(sf_ffi_type_size(sig.raw.pointee.arg_types[2]!))
        guard actual == size else {
            throw RuntimeError.invalidArgument(className: c.name, selector: "-",
                                               reason: "ivar '\(String(cString: name))' of type '\(type.encoding)' is \(actual) bytes, not \(size)")
        }
        try c.addIvar(String(cString: name), type: type)
        succeed()
        return true
    } catch {
        return fail(error, false)
    }
}

@_cdecl("sf_class_getIvarOffset")
func sf_class_getIvarOffset_impl(_ cls: sf_class_t?, _ name: UnsafePointer<CChar>?) -> Int {
    guard let cls, let name else { return -1 }
    return RuntimeClass.from(cls).ivar(named: String(cString: name))?.offset ?? -1
}

@_cdecl("sf_class_createInstance")
func sf_class_createInstance_impl(_ cls: sf_class_t?) -> sf_id? {
    guard let cls else { return fail(.invalidArgument(className: "-", selector: "-", reason: "class is NULL"), nil) }
    do throws(RuntimeError) {
        let c = RuntimeClass.from(cls)
        guard !c.isMetaclass else { throw RuntimeError.invalidArgument(className: c.name, selector: "-", reason: "cannot instantiate a metaclass") }
        guard Runtime.state.lock.withLock({ c.isRegistered }) else { throw RuntimeError.classNotRegistered(name: c.name, operation: "create an instance") }
        succeed()
        return ObjectLifecycle.allocate(c)
    } catch {
        return fail(error, nil)
    }
}

@_cdecl("sf_initWeak")
func sf_initWeak_impl(_ slot: UnsafeMutablePointer<sf_id?>?, _ obj: sf_id?) {
    guard let slot else { return }
    WeakTable.shared.register(slot, obj)
}

@_cdecl("sf_loadWeakRetained")
func sf_loadWeakRetained_impl(_ slot: UnsafeMutablePointer<sf_id?>?) -> sf_id? {
    guard let slot else { return nil }
    return WeakTable.shared.loadRetained(slot)
}

@_cdecl("sf_destroyWeak")
func sf_destroyWeak_impl(_ slot: UnsafeMutablePointer<sf_id?>?) {
    guard let slot else { return }
    WeakTable.shared.unregister(slot)
}

@_cdecl("sf_setAssociatedObject")
func sf_setAssociatedObject_impl(_ obj: sf_id?, _ key: UnsafeRawPointer?, _ value: sf_id?) {
    guard let obj, let key else { return }
    let table = ObjectSideTable.of(obj, create: true)!
    if let value {
        sf_retain_inline(value)
        table.set(.object(value), for: key)
    } else {
        table.set(nil, for: key)
    }
}

@_cdecl("sf_getAssociatedObject")
func sf_getAssociatedObject_impl(_ obj: sf_id?, _ key: UnsafeRawPointer?) -> sf_id? {
    guard let obj, let key, let table = ObjectSideTable.of(obj, create: false) else { return nil }
    if case let .object(o)? = table.get(key) { return o }
    return nil
}

@_cdecl("sf_object_addDeallocObserver")
func sf_object_addDeallocObserver_impl(_ obj: sf_id?, _ fn: sf_dealloc_fn?, _ context: UnsafeMutableRawPointer?) -> UInt64 {
    guard let obj, let fn else { return 0 }
    let ctx = UInt(bitPattern: context)
    return ObjectRef(obj).onDeallocate { o in fn(o.raw, UnsafeMutableRawPointer(bitPattern: ctx)) }?.id ?? 0
}

@_cdecl("sf_object_removeDeallocObserver")
func sf_object_removeDeallocObserver_impl(_ obj: sf_id?, _ token: UInt64) -> Bool {
    guard let obj else { return false }
    return ObjectRef(obj).removeDeallocObserver(DeallocObserverToken(id: token))
}

@_cdecl("sf_msg_send")
func sf_msg_send_impl(_ obj: sf_id?, _ sel: sf_sel?, _ ret: UnsafeMutableRawPointer?,
                      _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> sf_status {
    guard let obj else {
        // No RuntimeError case carries this code: record it directly so that the return value
        // and sf_last_error() agree.
        sf_set_last_error(SF_ERR_NIL_RECEIVER, "message sent to a NULL receiver")
        return SF_ERR_NIL_RECEIVER
    }
    guard let sel else { return fail(.invalidArgument(className: "-", selector: "-", reason: "selector is NULL"), SF_ERR_INVALID_ARGUMENT) }
    Runtime.discardStalePending()
    do {
        try CMessageSend.send(obj, Selector(raw: sel), ret: ret, args: args)
        succeed()
        return SF_OK
    } catch {
        return fail(error, error.code)
    }
}

/// `sf_msg_send`: the frame comes from C, one pointer per explicit argument.
enum CMessageSend {
    static func send(_ obj: sf_id, _ selector: Selector, ret: UnsafeMutableRawPointer?,
                     args: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) throws(RuntimeError) {
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        let cls = sf_object_isa(obj)!
        guard let method = sf_lookup_method(cls, selector.raw) else {
            try Forwarding.handleMissFromC(obj, selector, cls: cls, arguments: args, returnValue: ret)
            return
        }
        let sig = Signature(raw: sf_method_sig(method))
        let n = sig.argumentTypes.count
        if n > 2, args == nil {
            throw .invalidArgument(className: RuntimeClass.from(cls).name, selector: selector.name,
                                   reason: "\(n - 2) argument(s) expected (\(sig.encoding)) but args is NULL")
        }
        if sig.returnType != .void, ret == nil {
            throw .invalidArgument(className: RuntimeClass.from(cls).name, selector: selector.name,
                                   reason: "the method returns '\(sig.returnType.encoding)' but ret is NULL")
        }
        var receiver: sf_id? = obj
        var sel: sf_sel? = selector.raw
        try withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: n) { argv throws(RuntimeError) in
            try withUnsafeMutablePointer(to: &receiver) { r throws(RuntimeError) in
                try withUnsafeMutablePointer(to: &sel) { s throws(RuntimeError) in
                    argv[0] = UnsafeMutableRawPointer(r)
                    argv[1] = UnsafeMutableRawPointer(s)
                    for i in 2..<n {
                        guard let a = args![i - 2] else {
                            throw .invalidArgument(className: RuntimeClass.from(cls).name, selector: selector.name,
                                                   reason: "argument \(i - 1) pointer is NULL")
                        }
                        argv[i] = a
                    }
                    try MessageSend.withReturnStorage(sig) { (tmp: UnsafeMutableRawPointer) throws(RuntimeError) in
                        sf_ffi_call(&sig.storage.raw.pointee.cif, sf_method_imp(method)!, ret ?? tmp, argv.baseAddress!)
                    }
                    try Runtime.rethrowPending()
                }
            }
        }
    }
}
