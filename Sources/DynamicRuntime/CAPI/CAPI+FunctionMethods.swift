import CDynamicRuntime

/// Calls `release(context)` once, when the implementation is freed; only once the IMP was
/// handed over (a failed add leaves the context with the caller).
final class CFunctionContext: @unchecked Sendable {
    let context: UnsafeMutableRawPointer?
    let release: sf_context_release_fn?
    var installed = false
    init(_ context: UnsafeMutableRawPointer?, _ release: sf_context_release_fn?) {
        self.context = context
        self.release = release
    }
    deinit { if installed { release?(context) } }

    /// A closure IMP (the runtime's one mechanism for IMPs with state) whose body hands the
    /// call to `fn` with this context.
    func makeIMP(_ sig: Signature, _ fn: @escaping sf_function_fn) throws(RuntimeError) -> ClosureIMP {
        try ClosureIMP(signature: sig) { ret, args in
            var call = CCall(signature: sig, arguments: args, returnStorage: ret)
            sf_clear_last_error()
            let status = CCall.run(&call) { fn($0, self.context) }
            if status != SF_OK { throw call.callbackFailed(status, what: "the C method function") }
        }
    }
}

extension RuntimeClass {
    /// A method implemented by a C function plus a context (`CFunctionContext.makeIMP`). The
    /// context is released when the IMP is freed with the method.
    func installFunction(_ selector: Selector, types: String, fn: @escaping sf_function_fn, context: UnsafeMutableRawPointer?,
                         release: sf_context_release_fn?, replacing: Bool) throws(RuntimeError) {
        let owner = CFunctionContext(context, release)
        let sig = try Signature(types)
        let box = try owner.makeIMP(sig, fn)
        let previous = try install(selector, box.imp, sig, replacing: replacing).previous
        owner.installed = true
        // A C caller may still hold the previous IMP as a bare pointer: keep it with the class.
        if let o = previous?.owner { Runtime.state.lock.withLock { keptAlive.append(o) } }
    }
}

private func functionMethod(_ cls: sf_class_t?, _ sel: sf_sel?, _ types: UnsafePointer<CChar>?, _ fn: sf_function_fn?,
                            _ context: UnsafeMutableRawPointer?, _ release: sf_context_release_fn?, replacing: Bool) -> sf_status {
    capiStatus { () throws(RuntimeError) in
        let c = RuntimeClass.from(try CAPIValues.nonNull(cls, "class"))
        let s = Selector(raw: try CAPIValues.nonNull(sel, "selector", className: c.name))
        let t = try CAPIValues.nonNull(types, "type encoding", className: c.name, selector: s.name)
        let fn = try CAPIValues.nonNull(fn, "method function", className: c.name, selector: s.name)
        try c.installFunction(s, types: String(cString: t), fn: fn, context: context, release: release, replacing: replacing)
    }
}

/// The C function `sf_class_addMethodWithFunction` of SelectorForwarding.h.
@_cdecl("sf_class_addMethodWithFunction")
@_spi(CAPI) public func sf_class_addMethodWithFunction_impl(_ cls: sf_class_t?, _ sel: sf_sel?, _ types: UnsafePointer<CChar>?, _ fn: sf_function_fn?,
                                                           _ context: UnsafeMutableRawPointer?, _ release: sf_context_release_fn?) -> sf_status {
    functionMethod(cls, sel, types, fn, context, release, replacing: false)
}

/// The C function `sf_class_replaceMethodWithFunction` of SelectorForwarding.h.
@_cdecl("sf_class_replaceMethodWithFunction")
@_spi(CAPI) public func sf_class_replaceMethodWithFunction_impl(_ cls: sf_class_t?, _ sel: sf_sel?, _ types: UnsafePointer<CChar>?, _ fn: sf_function_fn?,
                                                               _ context: UnsafeMutableRawPointer?, _ release: sf_context_release_fn?) -> sf_status {
    functionMethod(cls, sel, types, fn, context, release, replacing: true)
}
