import CDynamicRuntime

// sf_call_*: a hook's or a C-function method's view of the call in progress (CCall).

/// The C function `sf_call_getTarget` of SelectorForwarding.h.
@_cdecl("sf_call_getTarget")
@_spi(CAPI) public func sf_call_getTarget_impl(_ call: sf_call_t?) -> sf_id? {
    capi(nil) { () throws(RuntimeError) in try CCall.find(call).pointee.target }
}

/// The C function `sf_call_getSelector` of SelectorForwarding.h.
@_cdecl("sf_call_getSelector")
@_spi(CAPI) public func sf_call_getSelector_impl(_ call: sf_call_t?) -> sf_sel? {
    capi(nil) { () throws(RuntimeError) in try CCall.find(call).pointee.selector.raw }
}

/// The C function `sf_call_getTypeEncoding` of SelectorForwarding.h.
@_cdecl("sf_call_getTypeEncoding")
@_spi(CAPI) public func sf_call_getTypeEncoding_impl(_ call: sf_call_t?) -> UnsafePointer<CChar>? {
    capi(nil) { () throws(RuntimeError) in UnsafePointer(try CCall.find(call).pointee.signature.raw.pointee.types) }
}

/// The C function `sf_call_getArgumentCount` of SelectorForwarding.h.
@_cdecl("sf_call_getArgumentCount")
@_spi(CAPI) public func sf_call_getArgumentCount_impl(_ call: sf_call_t?) -> Int {
    capi(-1) { () throws(RuntimeError) in try CCall.find(call).pointee.signature.argumentTypes.count - 2 }
}

/// The C function `sf_call_getArgument` of SelectorForwarding.h.
@_cdecl("sf_call_getArgument")
@_spi(CAPI) public func sf_call_getArgument_impl(_ call: sf_call_t?, _ index: Int, _ value: UnsafeMutableRawPointer?, _ size: Int) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        let c = try CCall.find(call).pointee
        let (value, i) = try CAPIValues.argument(value, c.signature, index, size, className: c.className, selector: c.selector.name)
        value.copyMemory(from: c.arguments[i]!, byteCount: size)
    }
}

/// The C function `sf_call_setArgument` of SelectorForwarding.h.
@_cdecl("sf_call_setArgument")
@_spi(CAPI) public func sf_call_setArgument_impl(_ call: sf_call_t?, _ index: Int, _ value: UnsafeRawPointer?, _ size: Int) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        let c = try CCall.find(call).pointee
        let (value, i) = try CAPIValues.argument(value, c.signature, index, size, className: c.className, selector: c.selector.name)
        c.arguments[i]!.copyMemory(from: value, byteCount: size)
    }
}

/// The C function `sf_call_getReturnValue` of SelectorForwarding.h.
@_cdecl("sf_call_getReturnValue")
@_spi(CAPI) public func sf_call_getReturnValue_impl(_ call: sf_call_t?, _ value: UnsafeMutableRawPointer?, _ size: Int) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        let c = try CCall.find(call).pointee
        guard let value = try CAPIValues.returnBuffer(value, c.signature, size, className: c.className, selector: c.selector.name) else { return }
        value.copyMemory(from: c.returnStorage, byteCount: size)
    }
}

/// The C function `sf_call_setReturnValue` of SelectorForwarding.h.
@_cdecl("sf_call_setReturnValue")
@_spi(CAPI) public func sf_call_setReturnValue_impl(_ call: sf_call_t?, _ value: UnsafeRawPointer?, _ size: Int) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        let c = try CCall.find(call).pointee
        guard let value = try CAPIValues.returnBuffer(value, c.signature, size, className: c.className, selector: c.selector.name) else { return }
        // Object returns are +1: the storage owns what it holds.
        let isObject = c.signature.returnType.isRetainedObject
        let old = isObject ? c.returnStorage.load(as: sf_id?.self) : nil
        c.returnStorage.copyMemory(from: value, byteCount: size)
        if isObject {
            if let new = c.returnStorage.load(as: sf_id?.self) { sf_retain_inline(new) }
            if let old { sf_release_inline(old) }
        }
    }
}

/// The C function `sf_call_proceed` of SelectorForwarding.h.
@_cdecl("sf_call_proceed")
@_spi(CAPI) public func sf_call_proceed_impl(_ call: sf_call_t?) -> sf_status {
    // The common case, an instead hook proceeding from its own callback: the handle is the
    // innermost call of this thread, found without walking the list.
    if let call, UnsafeMutableRawPointer(call) == sf_capi_calls(),
       let hook = UnsafeMutableRawPointer(call).assumingMemoryBound(to: CCall.self).pointee.hook {
        let ran = hook.proceedByWords()
        guard _fastPath(ran && sf_get_pending_error() == nil) else { return proceedSlowly(hook, ran: ran) }
        succeed()
        return SF_OK
    }
    return proceedFound(call)
}

/// `sf_call_proceed` of a call that is not the innermost of this thread, or not a hook's: found
/// in the thread's list. Out of line, as `proceedSlowly`.
@inline(never)
private func proceedFound(_ call: sf_call_t?) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        // Through the pointer: the hot path of a C instead-hook copies no CCall.
        let p = try CCall.find(call)
        guard p.pointee.hook != nil else {
            throw .invalidArgument(.init(className: p.pointee.className, selector: p.pointee.selector.name, operation: "sf_call_proceed", expected: "the call of an instead hook", actual: "a method body's call (it has nothing to proceed to)"))
        }
        try p.pointee.hook.unsafelyUnwrapped.proceed()
    }
}

/// `sf_call_proceed` of an instead hook's own call past the register call: the error that call
/// left (`ran`), or the general `proceed()`. Out of line, so that the common call has no frame
/// for an error.
@inline(never)
private func proceedSlowly(_ hook: HookContext, ran: Bool) -> sf_status {
    do throws(RuntimeError) {
        if ran { try Runtime.rethrowPending() } else { try hook.proceedGenerally() }
        succeed()
        return SF_OK
    } catch {
        return fail(error, error.code)
    }
}

/// The C function `sf_call_copyInvocation` of SelectorForwarding.h.
@_cdecl("sf_call_copyInvocation")
@_spi(CAPI) public func sf_call_copyInvocation_impl(_ call: sf_call_t?) -> sf_invocation_t? {
    capi(nil) { () throws(RuntimeError) in
        let c = try CCall.find(call).pointee
        let inv: Invocation
        if let hook = c.hook {
            inv = hook.makeInvocation()
        } else {
            inv = Invocation.capture(signature: c.signature.storage, arguments: c.arguments)
            inv.retainArguments()
        }
        return CInvocations.table.insert(inv)
    }
}
