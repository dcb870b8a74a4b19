import CDynamicRuntime
import Synchronization

/// A method-table entry as Swift sees it. It owns its C struct (from the method pool) and
/// returns it in `deinit`: removal and dispose retire the record for a grace period (caches and
/// senders may hold the struct without reference counting), and a `Method` value keeps it
/// readable for longer.
///
/// Memory matters here (one per method of every class: under 120 bytes a method in all, see
/// docs/performance.md): the selector and signature are read from the C struct, and the IMP's
/// owner and the hook are words of it, the owner published under a sequence count instead of
/// in a box.
@usableFromInline
final class MethodRecord: @unchecked Sendable {
    let raw: sf_method_t
    unowned let owningClass: RuntimeClass

    /// The ClosureIMP keeping the installed IMP alive (retained), or 0 for a plain function.
    /// Typed sends read it (in a read section) to call a closure's word body directly. A word
    /// of the C struct (`sf_method_owner_bits`), beside the key a typed send checks.
    var ownerWord: UInt { sf_method_owner_bits(raw) }
    /// The hook whose trampoline is installed here, retained, or 0. Written with the lock held
    /// (set after the trampoline is installed, cleared before it is taken out); read without it
    /// by typed sends and by a per-object entry merging the class's chain (in a read section: an
    /// uninstalled hook lives on through its trampoline until the grace period ends). A word of
    /// the C struct (`sf_method_hook_bits`).
    var hookWord: UInt { sf_method_hook_bits(raw) }
    /// Odd while `exchange` rewrites the IMP and its owner: `imp` reads the pair consistently
    /// without the lock (inside a read section).
    private let version = Atomic<UInt>(0)

    /// `hook` without a retain (in a read section).
    var hookRef: ObjectWord<MethodHook>? {
        let bits = hookWord
        return bits == 0 ? nil : ObjectWord<MethodHook>(nonZeroBits: bits)
    }

    /// The hook whose trampoline is installed here, if any (lock held, or in a read section).
    var hook: MethodHook? {
        get {
            let bits = hookWord
            return bits == 0 ? nil : ObjectWord<MethodHook>(nonZeroBits: bits).object
        }
        set {
            let bits = newValue.map { ObjectWord(retaining: $0).bits } ?? 0
            let old = sf_method_exchange_hook_bits(raw, bits)
            if old != 0 { ObjectWord<MethodHook>(nonZeroBits: old).release() }
        }
    }

    init(selector: Selector, signature: Signature, imp: IMP, in cls: RuntimeClass) {
        raw = sf_method_alloc()
        sf_method_init(raw, selector.raw, imp.pointer, signature.raw, nil)
        self.owningClass = cls
        if let owner = imp.owner { _ = sf_method_exchange_owner_bits(raw, ObjectWord(retaining: owner).bits) }
        sf_method_set_owner(raw, ObjectWord(unretained: self).pointer)
    }

    var selector: Selector { Selector(raw: sf_method_sel(raw)) }
    var signature: Signature { Signature(raw: sf_method_sig(raw)) }

    /// The record behind a C method handle (valid while its class is not disposed).
    static func from(_ raw: sf_method_t) -> MethodRecord? {
        sf_method_owner(raw).map { ObjectWord<MethodRecord>($0).object }
    }

    deinit {
        hook = nil
        Self.release(sf_method_exchange_owner_bits(raw, 0))
        sf_method_free(raw)
    }

    private static func release(_ bits: UInt) {
        ObjectWord<ClosureIMP>(bits: bits)?.release()
    }

    /// Lets go of the IMP's owner once the entry has left its table (after a grace period):
    /// for a hook's record that is the trampoline, which holds the hook, which holds this
    /// record. The C entry stays readable until `deinit`, for `Method` values.
    func dropOwner() {
        let v = beginWrite()
        let old = sf_method_exchange_owner_bits(raw, 0)
        endWrite(v)
        Self.release(old)
    }

    /// The IMP and its owner, as one value (lock held, or in a read section).
    var imp: IMP {
        while true {
            let v = version.load(ordering: .acquiring)
            if v & 1 != 0 { continue }
            let bits = ownerWord
            let pointer = sf_method_imp(raw)!
            atomicMemoryFence(ordering: .acquiring)
            guard version.load(ordering: .relaxed) == v else { continue }
            // A replaced owner is released only after the grace period: still alive here.
            let owner = bits == 0 ? nil : ObjectWord<ClosureIMP>(nonZeroBits: bits).object
            return IMP(pointer: pointer, owner: owner)
        }
    }

    /// The closure the IMP runs, if any (lock held).
    var owner: ClosureIMP? { imp.owner }

    /// Swaps the IMP; the previous one is returned with its owner so that it stays callable
    /// (lock held).
    func exchange(with new: IMP) -> IMP {
        Runtime.state.lock.assertHeld()
        let newBits = new.owner.map { ObjectWord(retaining: $0).bits } ?? 0
        // No owner while the IMP changes: a send that runs the owner's body directly and a
        // caller of the IMP never disagree on which is current, so no reader of both sees an
        // older body after a newer one. (Without an owner, a send calls the IMP.)
        let v = beginWrite()
        let oldBits = sf_method_exchange_owner_bits(raw, 0)
        let oldPointer = sf_method_swap_imp(raw, new.pointer)!
        _ = sf_method_exchange_owner_bits(raw, newBits)
        endWrite(v)
        let old = ObjectWord<ClosureIMP>(bits: oldBits)
        let oldOwner = old?.object
        // A reader without the lock may still be copying the old owner.
        if let old { Runtime.state.retire(releasing: old) }
        // Per-object entries below publish this IMP as their original.
        owningClass.resolveHiddenHooks()
        return IMP(pointer: oldPointer, owner: oldOwner)
    }

    private func beginWrite() -> UInt {
        let v = version.load(ordering: .relaxed)
        version.store(v + 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        return v
    }

    private func endWrite(_ v: UInt) {
        version.store(v + 2, ordering: .releasing)
    }
}
