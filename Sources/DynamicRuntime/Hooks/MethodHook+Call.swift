import CDynamicRuntime
import Glibc

// The call path of a hooked method: read the chain under the RCU (no lock), run it, reach the
// original directly. Nothing here retains the hook, the chain or the original's owner: the
// slot's words stay valid for the read section (writers retire them after a grace period).
extension MethodHook {
    /// The trampoline body: before hooks, instead hooks or the original, after hooks. An entry
    /// of a hidden per-object class runs its chain merged with the class's hook, if any.
    @inline(__always)
    func run(_ ret: UnsafeMutableRawPointer, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws(RuntimeError) {
        // A call through the IMP pointer starts clean, as a send does: the original's error
        // is read from the pending slot, so one left by an earlier direct call must not count.
        Runtime.discardStalePending()
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        try runInSection(ret, args)
    }

    /// `run` for a caller that holds a read section already (a typed send).
    @inline(__always)
    func runInSection(_ ret: UnsafeMutableRawPointer, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws(RuntimeError) {
        let chain = chainRef
        guard isHidden else { return try run(chain, inner: nil, ret, args) }
        try runHidden(chain, ret, args)
    }

    /// The hidden class's entry: the receiver's own chain, from its side table, merged after the
    /// chain of the visible class's hook if that entry is hooked, else wrapping the original.
    /// Both were resolved under the lock (`resolveInherited`). All read as guaranteed
    /// references: the read section keeps them.
    @inline(never)
    private func runHidden(_ chain: ObjectWord<HookChain>, _ ret: UnsafeMutableRawPointer,
                           _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws(RuntimeError) {
        let (target, outer, inner) = hiddenCall(chain, receiver: args[0]!.load(as: sf_id?.self))
        try target.withObject { (h) throws(RuntimeError) in try h.run(outer, inner: inner, ret, args) }
    }

    /// What a call of this hidden entry runs: the hook whose call reaches the original (the
    /// visible class's, if that entry is hooked, else this one, whose original is the visible
    /// class's method's IMP), its chain, and the receiver's own chain to merge after it (when
    /// the class's hook runs first). No method record is read per call.
    @inline(__always)
    func hiddenCall(_ chain: ObjectWord<HookChain>, receiver: sf_id?)
        -> (ObjectWord<MethodHook>, ObjectWord<HookChain>, ObjectWord<HookChain>?) {
        let own = ObjectHookList.chainRef(of: receiver, selector.raw)
        if let classHook = classHook.load() {
            // The class hook's own call reaches the original.
            return (classHook, classHook.withObject { $0.chainRef }, own)
        }
        return (ObjectWord(unretained: self), own ?? chain, nil)
    }

    /// For a hidden entry with no class hook to run first: the receiver's own chain's first
    /// instead body when that chain heads its list and is instead-only (the common case: one
    /// selector hooked), read from the side table in one load; nil sends the call the general way.
    @inline(__always)
    func ownFirstInstead(receiver: UInt64) -> ObjectWord<InsteadBody>? {
        guard classHook.isNil, let obj = sf_id(bitPattern: UInt(receiver)),
              let side = sf_object_side_inline(obj) else { return nil }
        guard let box = ObjectWord<ObjectSideTable>(side).withObject({ $0.headInstead.load() }) else { return nil }
        return box.withObject { $0.selector } == selector.raw ? box : nil
    }

    /// Resolves what a hidden entry runs around (lock held): the visible class's method's hook,
    /// or its IMP published as this entry's original (0 when it has none: looked up per call,
    /// which throws). Called when the entry is installed, whenever caches are flushed (every
    /// change to a method table or superclass), and when a method's IMP or hook changes
    /// (`RuntimeClass.resolveHiddenHooks`). The original goes first and the hook word last, so a
    /// reader that sees the hook word cleared calls the new original; a stale word is still
    /// safe to call within its read section (both are retired after a grace period).
    func resolveInherited() {
        Runtime.state.lock.assertHeld()
        guard isHidden else { return }
        let record = cls.lookupSuperclass?.findMethod(selector)
        if let classHook = record?.hook {
            self.classHook.store(ObjectWord(unretained: classHook))
            return
        }
        if !inherited {
            // Its own original (replaced on the hidden class itself): kept.
        } else if let record {
            storeOriginal(record.imp)
        } else {
            wordOriginalBits.store(0, ordering: .releasing)
            originalBody.store(nil)
            originalBits.store(0, ordering: .releasing)
        }
        classHook.store(nil)
    }

    /// Runs `chain` merged with `inner` position by position: before hooks (class, then
    /// object), instead hooks (object, then class) or the original, after hooks (class, then
    /// object). Both are read in place (the read section keeps them): no retain per call.
    @inline(__always)
    func run(_ chainRef: ObjectWord<HookChain>, inner innerRef: ObjectWord<HookChain>?, _ ret: UnsafeMutableRawPointer,
             _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws(RuntimeError) {
        clearReturn(ret)
        let outer = HookChain.shape(chainRef)
        let innerInstead = innerRef.map { HookChain.shape($0).instead } ?? 0
        var state = HookCallState(chainRef: chainRef, innerRef: innerRef, argv: args, returnStorage: ret,
                                  progress: HookProgress(index: 0, insteadCount: outer.instead + innerInstead,
                                                         outerInsteadCount: outer.instead, isWordCall: false))
        // The state is written by this code only: no stack protector.
        try _withUnprotectedUnsafeMutablePointer(to: &state) { (p) throws(RuntimeError) in
            let ctx = HookContext(hook: ObjectWord(unretained: self), state: p)
            do throws(RuntimeError) {
                // The common chain is instead-hooks only: no before or after loop to set up, and
                // the first instead hook is called as `proceed()` would call it.
                if outer.before == 0, outer.after == 0, innerRef == nil {
                    if let first = outer.firstInstead {
                        p.pointee.progress.index = 1
                        try InsteadBody.call(first, ctx)
                    } else if outer.instead != 0, !outer.hasOnce {
                        p.pointee.progress.index = 1
                        try HookChain.Entry.call(outer.entries, ctx)
                    } else {
                        try ctx.proceed()
                    }
                } else {
                    try runAround(outer, innerRef.map(HookChain.shape), ctx)
                }
            } catch {
                // The caller gets zero (the entry clears the storage): an object the original
                // or a hook already put there is owned by this call and must go first.
                ctx.releaseReturnObject()
                throw error
            }
        }
    }

    /// Before hooks (class, then object), the instead hooks (object, then class) or the
    /// original, after hooks (class, then object).
    private func runAround(_ outer: HookChain.Shape, _ inner: HookChain.Shape?, _ ctx: HookContext) throws(RuntimeError) {
        for i in 0..<outer.before { try HookChain.Entry.run(outer.entries + i, ctx, hasOnce: outer.hasOnce) }
        if let inner { for i in 0..<inner.before { try HookChain.Entry.run(inner.entries + i, ctx, hasOnce: inner.hasOnce) } }
        try ctx.proceed()
        let afterOuter = outer.entries + outer.before + outer.instead
        for i in 0..<outer.after { try HookChain.Entry.run(afterOuter + i, ctx, hasOnce: outer.hasOnce) }
        if let inner {
            let afterInner = inner.entries + inner.before + inner.instead
            for i in 0..<inner.after { try HookChain.Entry.run(afterInner + i, ctx, hasOnce: inner.hasOnce) }
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
            raise(error)
        }
    }

    /// Records a failed call's error for C and for the sender (out of line: the entries stay small).
    @inline(never)
    func raise(_ error: RuntimeError) {
        error.record()
        Runtime.raise(error)
    }

    @inline(__always)
    func clearReturn(_ ret: UnsafeMutableRawPointer) {
        if returnSize == 8 {
            ret.storeBytes(of: 0, as: UInt64.self)
        } else {
            ret.initializeMemory(as: UInt8.self, repeating: 0, count: returnSize)
        }
    }

    /// Runs the original (the caller is in a read section); `inherited` is the superclass's
    /// method when the caller looked it up already.
    @inline(__always)
    func callOriginal(_ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ ret: UnsafeMutableRawPointer,
                      inherited: sf_method_t? = nil) throws(RuntimeError) {
        let bits = originalBits.load(ordering: .acquiring)
        if bits != 0 {
            // A Swift closure (or another hook's trampoline) runs its body on this very argument
            // vector: no trampoline or ffi_call that would only unpack it again. Which of the
            // two was decided when the original was published.
            if let body = originalBody.load() {
                return try body.withObject { (o) throws(RuntimeError) in try callBody(o, args, ret) }
            }
            return try callDirect(CFunction.at(bits: bits, as: sf_imp.self), args, ret)
        }
        guard let m = inherited else { return try callInheritedOriginal(args, ret) }
        let imp = sf_method_imp(m)!
        if let owner = UnsafeRawPointer(bitPattern: sf_method_owner_bits(m)), try callBodyIfEntry(owner, imp, args, ret) { return }
        try callDirect(imp, args, ret)
    }

    @inline(never)
    private func callInheritedOriginal(_ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                                       _ ret: UnsafeMutableRawPointer) throws(RuntimeError) {
        // A root class's inherited `dealloc` is the runtime's root dealloc.
        let root = !cls.isMetaclass && selector == RootDealloc.selector ? RootDealloc.record.raw : nil
        guard let m = cls.lookupSuperclass.flatMap({ sf_lookup_method($0.raw, selector.raw) }) ?? root else {
            throw Forwarding.unrecognized(cls.raw, selector)
        }
        try callOriginal(args, ret, inherited: m)
    }

    /// Runs the body of the closure IMP `owner` when `imp` is its entry; says whether it did.
    @inline(__always)
    private func callBodyIfEntry(_ owner: UnsafeRawPointer, _ imp: sf_imp, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                                 _ ret: UnsafeMutableRawPointer) throws(RuntimeError) -> Bool {
        try ObjectWord<ClosureIMP>(owner).withObject { (o) throws(RuntimeError) in
            guard CFunction.address(of: o.entry) == CFunction.address(of: imp) else {
                return false
            }
            try callBody(o, args, ret)
            return true
        }
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
        if sf_get_pending_error() != nil { try Runtime.rethrowPending() }
    }

    @inline(__always)
    private func callDirect(_ imp: sf_imp, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ ret: UnsafeMutableRawPointer) throws(RuntimeError) {
        // Through a trampoline, the original is called directly with the same registers.
        if wideArguments != 0 {
            // Every argument and the return a whole integer register: a plain call (the callee
            // ignores registers past its own).
            typealias Words = @convention(c) (UInt64, UInt64, UInt64, UInt64, UInt64) -> UInt64
            let n = wideArguments
            let v = CFunction.cast(imp, to: Words.self)(
                args[0].unsafelyUnwrapped.load(as: UInt64.self), args[1].unsafelyUnwrapped.load(as: UInt64.self),
                n > 2 ? args[2].unsafelyUnwrapped.load(as: UInt64.self) : 0,
                n > 3 ? args[3].unsafelyUnwrapped.load(as: UInt64.self) : 0,
                n > 4 ? args[4].unsafelyUnwrapped.load(as: UInt64.self) : 0)
            if wideReturn { ret.storeBytes(of: v, as: UInt64.self) }
        } else if let layout = directLayout {
            let fn = CFunction.address(of: imp)
            if layout.pointee.int_only != 0 {
                sf_tramp_call_ints(layout, fn, ret, args)
            } else {
                sf_tramp_call_args(layout, fn, ret, args)
            }
        } else {
            callThroughLibffi(imp, args, ret)
        }
        if sf_get_pending_error() != nil { try Runtime.rethrowPending() }
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
