import CDynamicRuntime

// Forwarding handlers written in C: the C counterparts of resolveInstanceMethod:,
// forwardingTargetForSelector:, methodSignatureForSelector: and forwardInvocation:.

private func handlerClass(_ cls: sf_class_t?, _ fn: UnsafeRawPointer?, _ what: String) throws(RuntimeError) -> RuntimeClass {
    let c = RuntimeClass.from(try CAPIValues.nonNull(cls, "class"))
    _ = try CAPIValues.nonNull(fn, "\(what) function", className: c.name)
    return c
}

private func resolver(_ fn: @escaping sf_resolve_fn, _ context: UnsafeMutableRawPointer?) -> @Sendable (RuntimeClass, Selector) -> Bool {
    let ctx = UInt(bitPattern: context)
    return { c, s in fn(c.raw, s.raw, UnsafeMutableRawPointer(bitPattern: ctx)) }
}

/// The C function `sf_class_setResolveInstanceMethod` of SelectorForwarding.h.
@_cdecl("sf_class_setResolveInstanceMethod")
@_spi(CAPI) public func sf_class_setResolveInstanceMethod_impl(_ cls: sf_class_t?, _ fn: sf_resolve_fn?, _ context: UnsafeMutableRawPointer?) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        try handlerClass(cls, fn.map { CFunction.address(of: $0) }, "resolve").setResolveInstanceMethod(resolver(fn!, context))
    }
}

/// The C function `sf_class_setResolveClassMethod` of SelectorForwarding.h.
@_cdecl("sf_class_setResolveClassMethod")
@_spi(CAPI) public func sf_class_setResolveClassMethod_impl(_ cls: sf_class_t?, _ fn: sf_resolve_fn?, _ context: UnsafeMutableRawPointer?) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        try handlerClass(cls, fn.map { CFunction.address(of: $0) }, "resolve").setResolveClassMethod(resolver(fn!, context))
    }
}

/// The C function `sf_class_setForwardingTarget` of SelectorForwarding.h.
@_cdecl("sf_class_setForwardingTarget")
@_spi(CAPI) public func sf_class_setForwardingTarget_impl(_ cls: sf_class_t?, _ fn: sf_forwarding_target_fn?, _ context: UnsafeMutableRawPointer?) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        let c = try handlerClass(cls, fn.map { CFunction.address(of: $0) }, "forwarding target")
        let fn = fn!, ctx = UInt(bitPattern: context)
        try c.setForwardingTarget { o, s in fn(o.raw, s.raw, UnsafeMutableRawPointer(bitPattern: ctx)).map { ObjectRef($0) } }
    }
}

/// The C function `sf_class_setMethodSignature` of SelectorForwarding.h.
@_cdecl("sf_class_setMethodSignature")
@_spi(CAPI) public func sf_class_setMethodSignature_impl(_ cls: sf_class_t?, _ fn: sf_method_signature_fn?, _ context: UnsafeMutableRawPointer?) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        let c = try handlerClass(cls, fn.map { CFunction.address(of: $0) }, "method signature")
        let fn = fn!, ctx = UInt(bitPattern: context)
        try c.setMethodSignature { o, s in
            guard let types = fn(o.raw, s.raw, UnsafeMutableRawPointer(bitPattern: ctx)) else { return nil }
            return try Signature(String(cString: types))
        }
    }
}

/// The C function `sf_class_setForwardInvocation` of SelectorForwarding.h.
@_cdecl("sf_class_setForwardInvocation")
@_spi(CAPI) public func sf_class_setForwardInvocation_impl(_ cls: sf_class_t?, _ fn: sf_forward_invocation_fn?, _ context: UnsafeMutableRawPointer?) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        let c = try handlerClass(cls, fn.map { CFunction.address(of: $0) }, "forwardInvocation")
        let fn = fn!, ctx = UInt(bitPattern: context)
        try c.setForwardInvocation { inv throws(RuntimeError) in
            sf_set_last_error(SF_OK, nil)
            let status = CInvocations.table.lend(inv) { fn($0, UnsafeMutableRawPointer(bitPattern: ctx)) }
            guard status == SF_OK else {
                let detail = sf_last_error() == SF_OK ? "" : ": " + String(cString: sf_last_error_message())
                throw .forwardingFailed(.init(className: inv.className, selector: inv.selector.name, reason: "the C forwardInvocation handler returned status \(status.rawValue)\(detail)"))
            }
        }
    }
}

/// The C function `sf_setForwardHandler` of SelectorForwarding.h.
@_cdecl("sf_setForwardHandler")
@_spi(CAPI) public func sf_setForwardHandler_impl(_ fn: sf_forward_handler_fn?, _ context: UnsafeMutableRawPointer?) {
    guard let fn else { return ForwardHandler.set(nil) }
    let ctx = UInt(bitPattern: context)
    ForwardHandler.set { inv in
        let receiver = inv.target.raw, selector = inv.selector.raw
        return CInvocations.table.lend(inv) { fn(receiver, selector, $0, UnsafeMutableRawPointer(bitPattern: ctx)) }
    }
}
