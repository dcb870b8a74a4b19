import CShims
import Glibc

// The call path of a hooked method: read the chain under the RCU (no lock), run it, reach the
// original directly. Nothing here retains the hook, the chain or the original's owner: the
// slot's words stay valid for the read section (writers retire them after a grace period).
extension MethodHook {
    /// The trampoline body: before hooks, instead hooks or the original, after hooks. An entry
    /// of a hidden per-object class runs its chain merged with the class's hook, if any.
    func run(_ ret: UnsafeMutableRawPointer, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws(RuntimeError) {
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        let chain = Unmanaged<HookChain>.fromOpaque(sf_hook_chain(slot)!)
        guard isHidden else { return try run(chain, inner: nil, ret, args) }
        // The hidden class's entry: the receiver's own chain, from its side table. All read as
        // guaranteed references: the read section keeps them.
        let own = ObjectHookList.chainRef(of: args[0]!.load(as: sf_id?.self), selector.raw)
        if let classHook = classHook() {
            unowned(unsafe) let h = classHook.takeUnretainedValue()
            try h.run(Unmanaged.fromOpaque(sf_hook_chain(h.slot)!), inner: own, ret, args)
        } else {
            try run(own ?? chain, inner: nil, ret, args)
        }
    }

    /// The hook the visible class's entry runs, if that entry is hooked (in a read section).
    private func classHook() -> Unmanaged<MethodHook>? {
        guard let superclass = cls.lookupSuperclass, let m = sf_lookup_method(superclass.raw, selector.raw),
              let record = sf_method_owner(m) else { return nil }
        return Unmanaged<MethodRecord>.fromOpaque(record)._withUnsafeGuaranteedRef { $0.hookRef }
    }

    /// Runs `chain`, and `inner` position by position after it (class, then object): before
    /// hooks, instead hooks (or the original), after hooks. Both are read as guaranteed
    /// references (the read section keeps them): no retain per call.
    func run(_ chainRef: Unmanaged<HookChain>, inner innerRef: Unmanaged<HookChain>?, _ ret: UnsafeMutableRawPointer,
             _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws(RuntimeError) {
        clearReturn(ret)
        try withGuaranteed(chainRef) { (chain) throws(RuntimeError) in
            let outer = chain.instead.count
            var state = HookCallState(outerInsteadCount: outer,
                                      insteadCount: outer + (innerRef.map { $0._withUnsafeGuaranteedRef { $0.instead.count } } ?? 0))
            try withUnsafeMutablePointer(to: &state) { (p) throws(RuntimeError) in
                let ctx = HookContext(hook: Unmanaged.passUnretained(self), chain: chainRef, inner: innerRef, arguments: args,
                                      returnStorage: ret, state: p)
                do throws(RuntimeError) {
                    // The common chain is instead-hooks only: no before or after loop to set up.
                    if !chain.before.isEmpty { for e in chain.before { try e.run(ctx) } }
                    if let inner = ctx.inner { for e in inner.before { try e.run(ctx) } }
                    try ctx.proceed()
                    if !chain.after.isEmpty { for e in chain.after { try e.run(ctx) } }
                    if let inner = ctx.inner { for e in inner.after { try e.run(ctx) } }
                } catch {
                    // The caller gets zero (the entry clears the storage): an object the original
                    // or a hook already put there is owned by this call and must go first.
                    ctx.releaseReturnObject()
                    throw error
                }
            }
        }
    }

    /// A call from C through a register entry: errors cannot unwind through C frames, so the
    /// caller gets zero and the sender the error (C reads it with sf_last_error()).
    @inline(__always)
    func enter(_ ret: UnsafeMutableRawPointer, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        do {
            try run(ret, args)
        } catch {
            ret.initializeMemory(as: UInt8.self, repeating: 0, count: returnSize)
            error.record()
            Runtime.raise(error)
        }
    }

    @inline(__always)
    func clearReturn(_ ret: UnsafeMutableRawPointer) {
        if returnSize == 8 {
            ret.storeBytes(of: 0, as: UInt64.self)
        } else {
            ret.initializeMemory(as: UInt8.self, repeating: 0, count: returnSize)
        }
    }

    /// Runs the original (the caller is in a read section).
    func callOriginal(_ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ ret: UnsafeMutableRawPointer) throws(RuntimeError) {
        guard let imp = sf_hook_original(slot) else { return try callInheritedOriginal(args, ret) }
        // A Swift closure (or another hook's trampoline) runs its body on this very argument
        // vector: no trampoline or ffi_call that would only unpack it again. The owner word may
        // lag the IMP during a replace; then the entry differs and the IMP is called.
        if let owner = sf_hook_owner(slot) {
            unowned(unsafe) let o = Unmanaged<ClosureIMP>.fromOpaque(owner).takeUnretainedValue()
            if unsafeBitCast(o.entry, to: UnsafeRawPointer.self) == unsafeBitCast(imp, to: UnsafeRawPointer.self) {
                return try callBody(o, args, ret)
            }
        }
        try callDirect(imp, args, ret)
    }

    private func callInheritedOriginal(_ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ ret: UnsafeMutableRawPointer) throws(RuntimeError) {
        guard let superclass = cls.lookupSuperclass, let m = sf_lookup_method(superclass.raw, selector.raw) else {
            throw Forwarding.unrecognized(cls.raw, selector)
        }
        let imp = sf_method_imp(m)!
        if let owner = MethodRecord.from(m)?.imp.owner,
           unsafeBitCast(owner.entry, to: UnsafeRawPointer.self) == unsafeBitCast(imp, to: UnsafeRawPointer.self) {
            return try callBody(owner, args, ret)
        }
        try callDirect(imp, args, ret)
    }

    private func callBody(_ owner: ClosureIMP, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ ret: UnsafeMutableRawPointer) throws(RuntimeError) {
        let receiverClass = Runtime.receiverClass(args)
        do {
            try owner.body(ret, args)
        } catch {
            ret.initializeMemory(as: UInt8.self, repeating: 0, count: returnSize)
            let e = Runtime.wrap(error, receiverClass: receiverClass, args)
            e.record()
            Runtime.raise(e)
        }
        try Runtime.rethrowPending()
    }

    @inline(__always)
    private func callDirect(_ imp: sf_imp, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ ret: UnsafeMutableRawPointer) throws(RuntimeError) {
        // Through a trampoline, the original is called directly with the same registers.
        if let layout = directLayout {
            let fn = unsafeBitCast(imp, to: UnsafeRawPointer.self)
            if layout.pointee.int_only != 0 {
                sf_tramp_call_ints(layout, fn, ret, args)
            } else {
                sf_tramp_call_args(layout, fn, ret, args)
            }
        } else {
            callThroughLibffi(imp, args, ret)
        }
        try Runtime.rethrowPending()
    }

    private func callThroughLibffi(_ imp: sf_imp, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ ret: UnsafeMutableRawPointer) {
        // libffi's x86-64 ffi_call rewrites the avalue entries of structs larger than 16 bytes
        // to point at copies in its own frame, dead once it returns. Call with a copy of the
        // vector: `args` must stay valid for after-hooks, another proceed(), makeInvocation().
        let count = signature.argumentTypes.count
        withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: count) { copy in
            copy.baseAddress!.initialize(from: args, count: count)
            sf_ffi_call(&signature.storage.raw.pointee.cif, imp, ret, copy.baseAddress!)
        }
    }
}
