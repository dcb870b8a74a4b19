import CDynamicRuntime

extension IMP {
    /// The forwarding IMP (`sf_msgForward`, objc4's `_objc_msgForward`): called as a method,
    /// or installed as one, it runs the forwarding path (stages 2–4) with the call's own
    /// arguments, typed by `methodSignatureForSelector:` or else by the receiver's method
    /// entry for the selector. With neither, the call returns zero and reports
    /// `forwardingFailed` (see SelectorForwarding.h).
    public static let forwarding = IMP(sf_msgForward)
}

extension RuntimeClass {
    /// The IMP a send of `selector` to an instance (for a metaclass: to the class) would run:
    /// the method's, after asking the resolver, or `IMP.forwarding` when nothing implements it
    /// (objc4's `class_getMethodImplementation`).
    public func methodImplementation(for selector: Selector) -> IMP {
        let found = { () -> IMP? in
            sf_rcu_enter()
            defer { sf_rcu_exit() }
            return sf_lookup_method(self.raw, selector.raw).flatMap { sf_method_imp($0) }.map { IMP($0) }
        }
        if let imp = found() { return imp }
        if Forwarding.resolveForLookup(raw, selector), let imp = found() { return imp }
        return .forwarding
    }
}

/// The code `sf_msgForward` jumps to: one trampoline slot (or, where the slots cannot carry
/// the signature, libffi closure) per signature it has forwarded (immortal, like signatures),
/// whose body runs the forwarding stages.
enum ForwardingIMP {
    nonisolated(unsafe) static let closures = Locked<[UnsafeRawPointer: sf_imp]>([:])
    /// The slots' contexts, kept reachable (the slots' words live in pages leak checkers skip).
    nonisolated(unsafe) private static var contexts: [UnsafeMutablePointer<sf_tramp_context>] = []

    static func code(for sig: Signature) -> sf_imp? {
        let key = UnsafeRawPointer(sig.raw)
        return closures.withLock { table -> sf_imp? in
            if let code = table[key] { return code }
            if sf_tramp_enabled() != 0, let layout = sig.storage.layout {
                let context = UnsafeMutablePointer<sf_tramp_context>.allocate(capacity: 1)
                context.initialize(to: sf_tramp_context(handler: forwardTrampolineEntry,
                                                        owner: UnsafeMutableRawPointer(sig.storage.raw), layout: layout))
                let entry = CFunction.address(of: sf_tramp_entry as @convention(c) () -> Void)
                if let code = sf_tramp_alloc(context, entry) {
                    contexts.append(context)
                    let imp = CFunction.at(code, as: sf_imp.self)
                    table[key] = imp
                    return imp
                }
                context.deallocate()
            }
            var code: UnsafeMutableRawPointer?
            guard let closure = sf_ffi_closure_alloc(&code), let code else { return nil }
            let status = sf_ffi_prep_closure(closure, &sig.storage.raw.pointee.cif, forwardClosureEntry,
                                             UnsafeMutableRawPointer(sig.storage.raw), code)
            guard status == FFI_OK else {
                sf_ffi_closure_free(closure)
                return nil
            }
            let imp = CFunction.at(code, as: sf_imp.self)
            table[key] = imp
            return imp
        }
    }

    /// Whether x86-64 returns a value of `type` through memory (the caller's buffer in rdi).
    static func returnsInMemory(_ type: TypeEncoding, size: Int) -> Bool {
        guard case .structure = type else { return false }
        return size > 16
    }

    /// Picks the code for a call to `sf_msgForward` whose first three words are `a0…a2`.
    static func target(_ a0: UnsafeMutableRawPointer?, _ a1: UnsafeMutableRawPointer?, _ a2: UnsafeMutableRawPointer?,
                       _ stretOut: UnsafeMutablePointer<Int32>) -> sf_imp? {
        let obj: sf_id?, sel: Selector, stret: Bool
        if let a1, SelectorTable.shared.contains(a1) {
            (obj, sel, stret) = (a0?.assumingMemoryBound(to: sf_object.self), Selector(raw: a1.assumingMemoryBound(to: sf_selector.self)), false)
        } else if let a2, SelectorTable.shared.contains(a2) {
            (obj, sel, stret) = (a1?.assumingMemoryBound(to: sf_object.self), Selector(raw: a2.assumingMemoryBound(to: sf_selector.self)), true)
        } else {
            report(.invalidArgument(.init(operation: "sf_msgForward", expected: "a registered selector as _cmd", actual: "an unregistered one")))
            return nil
        }
        stretOut.pointee = stret ? 1 : 0
        guard let obj else {
            sf_set_last_error(SF_ERR_NIL_RECEIVER, "message sent to a nil receiver")
            return nil
        }
        let cls = sf_object_isa(obj)!
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        var learnt: Signature?
        do {
            learnt = try Forwarding.methodSignature(obj, sel, cls)
        } catch {
            report(error)
            return nil
        }
        if learnt == nil, let m = sf_lookup_method(cls, sel.raw) { learnt = Signature(raw: sf_method_sig(m)) }
        guard let sig = learnt else {
            report(.forwardingFailed(.init(className: Forwarding.visibleName(cls), selector: sel.name, reason: "the forwarding IMP needs the arguments' types: define methodSignatureForSelector:")))
            return nil
        }
        let inMemory = returnsInMemory(sig.returnType, size: Int(sf_ffi_type_size(sig.raw.pointee.return_type)))
        guard inMemory == stret else {
            report(.signatureMismatch(.init(className: Forwarding.visibleName(cls), selector: sel.name, expected: sig.encoding, actual: stret ? "a call returning through memory" : "a call returning in registers")))
            return nil
        }
        guard let code = code(for: sig) else {
            report(.forwardingFailed(.init(className: Forwarding.visibleName(cls), selector: sel.name, reason: "no forwarding trampoline or libffi closure could be made")))
            return nil
        }
        return code
    }

    /// For a C caller (sf_last_error) and for a Swift send around the call (pending error).
    static func report(_ error: RuntimeError) {
        error.record()
        Runtime.raise(error)
    }
}

let forwardTargetEntry: sf_forward_target_fn = { a0, a1, a2, stret in
    ForwardingIMP.target(a0, a1, a2, stret!)
}

private let forwardClosureEntry: @convention(c) (
    UnsafeMutablePointer<ffi_cif>?, UnsafeMutableRawPointer?,
    UnsafeMutablePointer<UnsafeMutableRawPointer?>?, UnsafeMutableRawPointer?
) -> Void = { _, ret, args, userData in
    forward(ret!, args!, userData!)
}

private let forwardTrampolineEntry: sf_tramp_handler = { context, frame in
    let context = context!.assumingMemoryBound(to: sf_tramp_context.self)
    let layout = context.pointee.layout!
    withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: Int(layout.pointee.nargs)) { args in
        let ret = sf_tramp_frame_args(frame, layout, args.baseAddress)!
        forward(ret, args.baseAddress!, context.pointee.owner!)
        sf_tramp_frame_return(frame, layout)
    }
}

/// Runs the forwarding stages for one call of the forwarding IMP.
private func forward(_ ret: UnsafeMutableRawPointer, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                     _ signature: UnsafeMutableRawPointer) {
    let sig = Signature(raw: signature.assumingMemoryBound(to: sf_signature.self))
    let obj = args[0]!.load(as: sf_id.self)
    let sel = Selector(raw: args[1]!.load(as: sf_sel.self))
    let cls = sf_object_isa(obj)!
    sf_rcu_enter()
    defer { sf_rcu_exit() }
    do throws(RuntimeError) {
        try Forwarding.guardDepth(cls, sel)
        defer { sf_forward_depth_exit() }
        _ = try Forwarding.forwardStages(obj, sel, cls: cls, frame: SwiftFrame(signature: sig, arguments: args, returnValue: ret))
        sf_clear_last_error()
    } catch {
        ret.initializeMemory(as: UInt8.self, repeating: 0, count: sig.storage.returnSize)
        ForwardingIMP.report(error)
    }
}
