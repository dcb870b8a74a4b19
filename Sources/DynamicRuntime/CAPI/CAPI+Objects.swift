import CDynamicRuntime

/// The C function `sf_class_addIvar` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_addIvar")
@_spi(CAPI) public func sf_class_addIvar_impl(_ cls: sf_class_t?, _ name: UnsafePointer<CChar>?, _ size: Int,
                           _ log2Alignment: UInt8, _ types: UnsafePointer<CChar>?) -> Bool {
    guard let cls, let name, let types else {
        return fail(.nullArgument("a class, a name and types"), false)
    }
    let c = RuntimeClass.from(cls)
    do throws(RuntimeError) {
        // One type, parsed on its own: an ivar has no by-value argument limit.
        var parser = TypeEncodingParser(String(cString: types))
        let type = try parser.parseSingleType()
        let actual = try SignatureTable.shared.layout(of: type).size
        guard actual == size else {
            throw RuntimeError.invalidArgument(.init(className: c.name, ivar: String(cString: name), expected: "\(actual) bytes for type '\(type.encoding)'", actual: "\(size) bytes"))
        }
        guard log2Alignment < 13 else {
            throw RuntimeError.invalidArgument(.init(className: c.name, ivar: String(cString: name), expected: "a log2_alignment up to 12 (4096 bytes)", actual: "\(log2Alignment)"))
        }
        try c.addIvar(String(cString: name), type: type, alignment: 1 << Int(log2Alignment))
        succeed()
        return true
    } catch {
        return fail(error, false)
    }
}

/// The C function `sf_class_getIvarOffset` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_getIvarOffset")
@_spi(CAPI) public func sf_class_getIvarOffset_impl(_ cls: sf_class_t?, _ name: UnsafePointer<CChar>?) -> Int {
    guard let cls, let name else { return -1 }
    return RuntimeClass.from(cls).ivar(named: String(cString: name))?.offset ?? -1
}

/// The C function `sf_class_createInstance` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_createInstance")
@_spi(CAPI) public func sf_class_createInstance_impl(_ cls: sf_class_t?) -> sf_id? {
    guard let cls else { return fail(.nullArgument("a class"), nil) }
    do throws(RuntimeError) {
        let c = RuntimeClass.from(cls)
        guard !c.isMetaclass else { throw RuntimeError.invalidArgument(.init(className: c.name, operation: "create an instance", expected: "a class", actual: "a metaclass")) }
        guard Runtime.state.lock.withLock({ c.isRegistered }) else { throw RuntimeError.classNotRegistered(.init(className: c.name, operation: "create an instance")) }
        // Creating an instance plays `+alloc`'s part: the class's first message.
        try c.ensureInitialized()
        succeed()
        return ObjectLifecycle.allocate(c)
    } catch {
        return fail(error, nil)
    }
}

/// The C function `sf_object_dispose` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_object_dispose")
@_spi(CAPI) public func sf_object_dispose_impl(_ obj: sf_id?) -> sf_status {
    capiStatus { () throws(RuntimeError) in try ObjectLifecycle.dispose(try CAPIValues.nonNull(obj, "object")) }
}

/// The C function `sf_initWeak` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_initWeak")
@_spi(CAPI) public func sf_initWeak_impl(_ slot: UnsafeMutablePointer<sf_id?>?, _ obj: sf_id?) {
    guard let slot else { return }
    if let obj, sf_object_isTagged(obj) {
        slot.pointee = nil
        return RuntimeError.taggedWeak(obj).record()
    }
    WeakTable.shared.register(slot, obj)
}

/// The C function `sf_loadWeakRetained` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_loadWeakRetained")
@_spi(CAPI) public func sf_loadWeakRetained_impl(_ slot: UnsafeMutablePointer<sf_id?>?) -> sf_id? {
    guard let slot else { return nil }
    return WeakTable.shared.loadRetained(slot)
}

/// The C function `sf_destroyWeak` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_destroyWeak")
@_spi(CAPI) public func sf_destroyWeak_impl(_ slot: UnsafeMutablePointer<sf_id?>?) {
    guard let slot else { return }
    WeakTable.shared.unregister(slot)
}

/// The C function `sf_setAssociatedObject` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_setAssociatedObject")
@_spi(CAPI) public func sf_setAssociatedObject_impl(_ obj: sf_id?, _ key: UnsafeRawPointer?, _ value: sf_id?) {
    guard let obj, let key else { return }
    if sf_object_isTagged(obj) { return RuntimeError.taggedObject(obj, "associate an object").record() }
    if value != nil, ObjectLifecycle.isDeallocating(obj) {
        let name = sf_object_getClass(obj).map { String(cString: sf_class_getName($0)) } ?? "?"
        RuntimeError.invalidArgument(.init(className: name, operation: "associate an object", expected: "a live object", actual: "an object that is deallocating")).record()
        return
    }
    sf_clear_last_error()
    if let value {
        sf_retain_inline(value)
        ObjectSideTable.store(.object(value), for: key, of: obj)
    } else {
        ObjectSideTable.removeValue(for: key, of: obj)
    }
}

/// The C function `sf_getAssociatedObject` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_getAssociatedObject")
@_spi(CAPI) public func sf_getAssociatedObject_impl(_ obj: sf_id?, _ key: UnsafeRawPointer?) -> sf_id? {
    guard let obj, let key, let table = ObjectSideTable.of(obj, create: false) else { return nil }
    return table.get(key)?.object
}

/// The C function `sf_object_addDeallocObserver` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_object_addDeallocObserver")
@_spi(CAPI) public func sf_object_addDeallocObserver_impl(_ obj: sf_id?, _ fn: sf_dealloc_fn?, _ context: UnsafeMutableRawPointer?) -> UInt64 {
    guard let obj, let fn else { return 0 }
    if sf_object_isTagged(obj) { return fail(.taggedObject(obj, "observe its deallocation"), 0) }
    let ctx = UInt(bitPattern: context)
    return ObjectRef(obj).onDeallocate { o in fn(o.raw, UnsafeMutableRawPointer(bitPattern: ctx)) }?.id ?? 0
}

/// The C function `sf_object_removeDeallocObserver` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_object_removeDeallocObserver")
@_spi(CAPI) public func sf_object_removeDeallocObserver_impl(_ obj: sf_id?, _ token: UInt64) -> Bool {
    guard let obj else { return false }
    return ObjectRef(obj).removeDeallocObserver(DeallocObserverToken(id: token))
}
