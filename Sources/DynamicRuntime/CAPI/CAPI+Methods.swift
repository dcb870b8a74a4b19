import CDynamicRuntime

func methodArgs(_ cls: sf_class_t?, _ sel: sf_sel?, _ imp: sf_imp?,
                        _ types: UnsafePointer<CChar>?) -> Result<(RuntimeClass, Selector, IMP, String), RuntimeError> {
    guard let cls else { return .failure(.nullArgument("a class")) }
    let c = RuntimeClass.from(cls)
    guard let sel else { return .failure(.nullArgument("a selector", className: c.name)) }
    let s = Selector(raw: sel)
    guard let imp else { return .failure(.nullArgument("an IMP", className: c.name, selector: s.name)) }
    guard let types else { return .failure(.nullArgument("a type encoding", className: c.name, selector: s.name)) }
    return .success((c, s, IMP(imp), String(cString: types)))
}

/// The C function `sf_class_addMethod` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_addMethod")
@_spi(CAPI) public func sf_class_addMethod_impl(_ cls: sf_class_t?, _ sel: sf_sel?, _ imp: sf_imp?, _ types: UnsafePointer<CChar>?) -> sf_status {
    do {
        let (c, s, i, t) = try methodArgs(cls, sel, imp, types).get()
        try c.addMethod(s, implementation: i, types: t)
        succeed()
        return SF_OK
    } catch {
        return fail(error, error.code)
    }
}

/// The C function `sf_class_replaceMethod` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_class_replaceMethod")
@_spi(CAPI) public func sf_class_replaceMethod_impl(_ cls: sf_class_t?, _ sel: sf_sel?, _ imp: sf_imp?, _ types: UnsafePointer<CChar>?) -> sf_imp? {
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

/// The C function `sf_method_setImplementation` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_method_setImplementation")
@_spi(CAPI) public func sf_method_setImplementation_impl(_ m: sf_method_t?, _ imp: sf_imp?) -> sf_imp? {
    guard let m, let imp else {
        return fail(.nullArgument("a method and an IMP"), nil)
    }
    let result = Runtime.state.lock.withLock { () -> Result<sf_imp?, RuntimeError> in
        guard let record = MethodRecord.from(m) else { return .success(nil) }
        // An IMP from sf_imp_implementationWithFunction keeps its owner and must fit the signature.
        let new: IMP
        do throws(RuntimeError) {
            new = try UnboundIMPs.resolveNolock(IMP(imp), for: record.signature, className: record.owningClass.visibleName,
                                                selector: record.selector)
        } catch {
            return .failure(error)
        }
        if let hook = record.hook {
            // As replaceMethod does: the trampoline stays, the hook wraps the new IMP, and
            // unhooking later restores that one.
            let old = hook.original ?? hook.currentOriginal()
            _ = hook.replaceOriginal(with: new)
            if let owner = old.owner { record.owningClass.keptAlive.append(owner) }
            return .success(old.pointer)
        }
        let old = record.exchange(with: new)
        if let owner = old.owner { record.owningClass.keptAlive.append(owner) }
        return .success(old.pointer)
    }
    switch result {
    case let .success(old): return old
    case let .failure(error): return fail(error, nil)
    }
}

/// The C function `sf_method_exchangeImplementations` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_method_exchangeImplementations")
@_spi(CAPI) public func sf_method_exchangeImplementations_impl(_ a: sf_method_t?, _ b: sf_method_t?) {
    guard let a, let b else {
        return fail(.invalidArgument(.init(operation: "sf_method_exchangeImplementations", expected: "two methods", actual: "NULL")), ())
    }
    // The checks of RuntimeClass.exchangeImplementations: an IMP must never run with another
    // signature's arguments, and a hook's trampoline must stay where unhooking looks for it.
    let refused = Runtime.state.lock.withLock { () -> RuntimeError? in
        guard let ra = MethodRecord.from(a), let rb = MethodRecord.from(b) else {
            return .invalidArgument(.init(operation: "sf_method_exchangeImplementations", expected: "a runtime method", actual: "a pointer that is not one"))
        }
        guard ra.signature == rb.signature else {
            return .signatureMismatch(.init(className: ra.owningClass.visibleName, selector: rb.selector.name, expected: ra.signature.encoding, actual: rb.signature.encoding))
        }
        if let hooked = [ra, rb].first(where: { $0.hook != nil }) {
            return .hookFailed(.init(className: hooked.owningClass.visibleName, selector: hooked.selector.name, reason: "remove its hooks before exchanging implementations"))
        }
        let impA = ra.imp
        let impB = rb.exchange(with: impA)
        _ = ra.exchange(with: impB)
        return nil
    }
    if let refused { return fail(refused, ()) }
    succeed()
}
