import CShims
import Glibc

/// The trampoline for one (class, selector): a trampoline slot (or libffi closure) for the method's signature
/// that runs the chain around the original implementation.
final class MethodHook: @unchecked Sendable {
    let cls: RuntimeClass
    let selector: Selector
    let signature: Signature
    let slot: UnsafeMutablePointer<sf_hook_slot>
    /// True when the class did not define the method itself: the original is looked up in
    /// the superclass on each call, so later changes there are honoured (lock held).
    var inherited: Bool
    /// The original IMP with its owner, for `currentOriginal()`: one immutable box published
    /// atomically, so a sender reads a pointer and the owner keeping it alive without the lock.
    /// nil while inherited. The slot's `original` holds the same pointer for the call path.
    private let originalBox: PublishedIMP
    /// Set until the hook is retired (lock held or after the grace period). The trampoline holds
    /// the hook strongly: an invocation that kept the trampoline as its IMP can replay it later.
    var trampoline: ClosureIMP!
    /// The table entry the trampoline is installed in (lock held).
    var record: MethodRecord!
    /// For an entry of a hidden class: how many objects have hooks of their own on the
    /// selector; the entry goes when none has (lock held).
    var objectUsers = 0

    init(cls: RuntimeClass, selector: Selector, signature: Signature, inherited: Bool, original: IMP) throws(RuntimeError) {
        self.cls = cls
        self.selector = selector
        self.signature = signature
        self.inherited = inherited
        slot = UnsafeMutableRawPointer.allocate(byteCount: sf_hook_slot_size(), alignment: 16)
            .assumingMemoryBound(to: sf_hook_slot.self)
        slot.initialize(to: sf_hook_slot())
        sf_hook_set_original(slot, inherited ? nil : original.pointer)
        originalBox = PublishedIMP(inherited ? nil : original)
        let emptyChain = Unmanaged.passRetained(HookChain()).toOpaque()
        _ = sf_hook_swap_chain(slot, emptyChain)
        trampoline = try ClosureIMP(signature: signature) { [self] ret, args in
            try self.run(ret, args)
        }
    }

    deinit {
        if let chain = sf_hook_swap_chain(slot, nil) { Unmanaged<HookChain>.fromOpaque(chain).release() }
        slot.deallocate()
    }

    /// The wrapped IMP, nil while inherited (lock held).
    var original: IMP? { originalBox.imp }

    /// Makes the hook wrap `imp` (a replaced method); returns what it wrapped. The old IMP is
    /// freed after a grace period: senders may be calling it (lock held).
    func replaceOriginal(with imp: IMP) -> IMP? {
        Runtime.state.lock.assertHeld()
        let previous = originalBox.exchange(imp) { sf_hook_set_original(slot, imp.pointer) }
        inherited = false
        return previous
    }

    var chain: HookChain { Unmanaged<HookChain>.fromOpaque(sf_hook_chain(slot)!).takeUnretainedValue() }

    func contains(_ id: UInt64) -> Bool { chain.contains(id) }

    /// Whether the entry the trampoline is installed in is still in its class's table (lock
    /// held). Disposing a class (metaclass included) drops and frees its entries.
    var isInTable: Bool { !cls.isDisposed && record != nil && cls.methods[selector] === record }

    /// Publishes a new chain; the old one is freed after a grace period (lock held).
    func publish(_ new: HookChain) {
        Runtime.state.lock.assertHeld()
        let old = sf_hook_swap_chain(slot, Unmanaged.passRetained(new).toOpaque())!
        Runtime.state.retire(releasing: old)
    }

    /// The trampoline body: before hooks, instead hooks or the original, after hooks. An entry
    /// of a hidden per-object class runs its chain merged with the class's hook, if any.
    func run(_ ret: UnsafeMutableRawPointer, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws(RuntimeError) {
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        let chain = Unmanaged<HookChain>.fromOpaque(sf_hook_chain(slot)!).takeUnretainedValue()
        guard cls.isHidden else { return try run(chain, inner: nil, ret, args) }
        // The hidden class's entry: the receiver's own chain, from its side table.
        let own = ObjectHookList.chain(of: args[0]!.load(as: sf_id?.self), selector.raw)
        if let classHook = classHook() {
            try classHook.run(classHook.chain, inner: own, ret, args)
        } else {
            try run(own ?? chain, inner: nil, ret, args)
        }
    }

    /// The hook the visible class's entry runs, if that entry is hooked (in a read section).
    private func classHook() -> MethodHook? {
        guard let superclass = cls.lookupSuperclass, let m = sf_lookup_method(superclass.raw, selector.raw) else { return nil }
        return MethodRecord.from(m)?.hook
    }

    /// Runs `chain`, and `inner` position by position after it (class, then object): before
    /// hooks, instead hooks (or the original), after hooks.
    func run(_ chain: HookChain, inner: HookChain?, _ ret: UnsafeMutableRawPointer,
             _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws(RuntimeError) {
        ret.initializeMemory(as: UInt8.self, repeating: 0, count: signature.storage.returnSize)
        var state = HookCallState()
        try withUnsafeMutablePointer(to: &state) { (p) throws(RuntimeError) in
            let ctx = HookContext(hook: self, chain: chain, inner: inner, arguments: args, returnStorage: ret, state: p)
            do throws(RuntimeError) {
                for e in chain.before { try e.run(ctx) }
                if let inner { for e in inner.before { try e.run(ctx) } }
                try ctx.proceed()
                for e in chain.after { try e.run(ctx) }
                if let inner { for e in inner.after { try e.run(ctx) } }
            } catch {
                // The caller gets zero (closureEntry clears the storage): an object the original
                // or a hook already put there is owned by this call and must go first.
                ctx.releaseReturnObject()
                throw error
            }
        }
    }

    /// The original IMP now (an inherited one is looked up in the superclass).
    func currentOriginal() -> IMP {
        // No lock: a box replaced meanwhile is released only after this read section.
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        if let imp = originalBox.imp { return imp }
        let m = sf_lookup_method(cls.lookupSuperclass!.raw, selector.raw)!
        return MethodRecord.from(m)?.imp ?? IMP(sf_method_imp(m)!)
    }

    /// Runs the original (the caller is in a read section).
    func callOriginal(_ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ ret: UnsafeMutableRawPointer) throws(RuntimeError) {
        let imp: sf_imp
        let owner: ClosureIMP?
        if let direct = sf_hook_original(slot) {
            imp = direct
            owner = originalBox.imp?.owner
        } else {
            guard let superclass = cls.lookupSuperclass, let m = sf_lookup_method(superclass.raw, selector.raw) else {
                throw Forwarding.unrecognized(cls.raw, selector)
            }
            imp = sf_method_imp(m)!
            owner = MethodRecord.from(m)?.imp.owner
        }
        // A Swift closure (or another hook's trampoline) runs its body on this very argument
        // vector: no ffi_call into a libffi closure that would only unpack it again. The box
        // may lag the slot during a replace; then the pointers differ and libffi is used.
        if let owner, unsafeBitCast(owner.entry, to: UnsafeRawPointer.self) == unsafeBitCast(imp, to: UnsafeRawPointer.self) {
            let receiverClass = Runtime.receiverClass(args)
            do {
                try owner.body(ret, args)
            } catch {
                ret.initializeMemory(as: UInt8.self, repeating: 0, count: signature.storage.returnSize)
                let e = Runtime.wrap(error, receiverClass: receiverClass, args)
                e.record()
                Runtime.raise(e)
            }
            try Runtime.rethrowPending()
            return
        }
        // Through a trampoline, the original is called directly with the same registers.
        if trampoline.isTrampoline, let layout = signature.storage.layout {
            sf_tramp_call_args(layout, unsafeBitCast(imp, to: UnsafeRawPointer.self), ret, args)
            try Runtime.rethrowPending()
            return
        }
        // libffi's x86-64 ffi_call rewrites the avalue entries of structs larger than 16 bytes
        // to point at copies in its own frame, dead once it returns. Call with a copy of the
        // vector: `args` must stay valid for after-hooks, another proceed(), makeInvocation().
        let count = signature.argumentTypes.count
        withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: count) { copy in
            copy.baseAddress!.initialize(from: args, count: count)
            sf_ffi_call(&signature.storage.raw.pointee.cif, imp, ret, copy.baseAddress!)
        }
        try Runtime.rethrowPending()
    }
}
