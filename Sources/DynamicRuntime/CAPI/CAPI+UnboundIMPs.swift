import CDynamicRuntime

/// The C function `sf_imp_implementationWithFunction` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_imp_implementationWithFunction")
@_spi(CAPI) public func sf_imp_implementationWithFunction_impl(_ types: UnsafePointer<CChar>?, _ fn: sf_function_fn?,
                                                                _ context: UnsafeMutableRawPointer?, _ release: sf_context_release_fn?) -> sf_imp? {
    capi(nil) { () throws(RuntimeError) in
        let t = String(cString: try CAPIValues.nonNull(types, "type encoding"))
        let fn = try CAPIValues.nonNull(fn, "function")
        let owner = CFunctionContext(context, release)
        let box = try owner.makeIMP(try Signature(t), fn)
        owner.installed = true
        Runtime.state.lock.withLock {
            UnboundIMPs.byAddress[box.imp.address] = UnboundIMPs.Entry(box: box, function: fn, context: owner)
        }
        return box.entry
    }
}

/// The C function `sf_imp_getFunction` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_imp_getFunction")
@_spi(CAPI) public func sf_imp_getFunction_impl(_ imp: sf_imp?, _ outContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> sf_function_fn? {
    outContext?.pointee = nil
    return capi(nil) { () throws(RuntimeError) in
        let entry = try Runtime.state.lock.withLock { () throws(RuntimeError) in try registered(imp) }
        outContext?.pointee = entry.context.context
        return entry.function
    }
}

/// The C function `sf_imp_removeFunction` of SelectorForwarding.h (exported from the shared library).
@_cdecl("sf_imp_removeFunction")
@_spi(CAPI) public func sf_imp_removeFunction_impl(_ imp: sf_imp?) -> Bool {
    capi(false) { () throws(RuntimeError) in
        try Runtime.state.lock.withLock { () throws(RuntimeError) in
            let entry = try registered(imp)
            UnboundIMPs.byAddress[entry.box.imp.address] = nil
            // Methods that hold the IMP keep it; this reference goes after a grace period, so a
            // send that loaded the pointer just before finishes first.
            Runtime.state.retire { withExtendedLifetime(entry) {} }
        }
        Runtime.state.collectGarbage()
        return true
    }
}

/// The table's entry for `imp` (lock held).
private func registered(_ imp: sf_imp?) throws(RuntimeError) -> UnboundIMPs.Entry {
    Runtime.state.lock.assertHeld()
    guard let imp, let entry = UnboundIMPs.byAddress[CFunction.address(of: imp)] else {
        throw .invalidArgument(.init(expected: "an IMP made by sf_imp_implementationWithFunction and not removed",
                                     actual: imp.map { "\(CFunction.address(of: $0))" } ?? "NULL"))
    }
    return entry
}
