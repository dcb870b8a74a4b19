import CShims
import Synchronization

/// removal and dispose retire the record for a grace period (caches and senders may hold the
/// struct without reference counting), and a `Method` value keeps it readable for longer.
final class MethodRecord: @unchecked Sendable {
    let raw: sf_method_t
    let selector: Selector
    let signature: Signature
    unowned let owningClass: RuntimeClass
    /// The IMP with the owner keeping a closure IMP alive while installed: one immutable box,
    /// published atomically so `imp` can be read without the lock (inside a read section).
    /// Replaced boxes are released after a grace period; `deinit` drops the last one.
    private let impBox: Atomic<UnsafeMutableRawPointer?>
    /// The hook whose trampoline is installed here, if any (lock held).
    var hook: MethodHook?

    init(selector: Selector, signature: Signature, imp: IMP, in cls: RuntimeClass) {
        raw = UnsafeMutableRawPointer.allocate(byteCount: sf_method_struct_size(), alignment: 16)
            .assumingMemoryBound(to: sf_method.self)
        sf_method_init(raw, selector.raw, imp.pointer, signature.raw, nil)
        self.selector = selector
        self.signature = signature
        self.owningClass = cls
        impBox = Atomic(Unmanaged.passRetained(IMPBox(imp)).toOpaque())
        sf_method_set_owner(raw, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The record behind a C method handle (valid while its class is not disposed).
    static func from(_ raw: sf_method_t) -> MethodRecord? {
        sf_method_owner(raw).map { Unmanaged<MethodRecord>.fromOpaque($0).takeUnretainedValue() }
    }

    deinit {
        raw.deallocate()
        if let box = impBox.exchange(nil, ordering: .acquiring) { Unmanaged<IMPBox>.fromOpaque(box).release() }
    }

    /// Lets go of the IMP's owner once the entry has left its table (after a grace period):
    /// for a hook's record that is the trampoline, which holds the hook, which holds this
    /// record. The C entry stays readable until `deinit`, for `Method` values.
    func dropOwner() {
        let pointer = imp.pointer
        let fresh = Unmanaged.passRetained(IMPBox(IMP(pointer: pointer, owner: nil))).toOpaque()
        if let box = impBox.exchange(fresh, ordering: .acquiringAndReleasing) {
            Unmanaged<IMPBox>.fromOpaque(box).release()
        }
    }

    /// The IMP and its owner, as one value (lock held, or in a read section).
    var imp: IMP { Unmanaged<IMPBox>.fromOpaque(impBox.load(ordering: .acquiring)!).takeUnretainedValue().imp }

    /// The closure the IMP runs, if any (lock held).
    var owner: ClosureIMP? { imp.owner }

    /// Swaps the IMP; the previous one is returned with its owner so that it stays callable
    /// (lock held).
    func exchange(with new: IMP) -> IMP {
        let box = Unmanaged<IMPBox>.fromOpaque(impBox.exchange(Unmanaged.passRetained(IMPBox(new)).toOpaque(),
                                                               ordering: .acquiringAndReleasing)!)
        let old = IMP(pointer: sf_method_swap_imp(raw, new.pointer)!, owner: box.takeUnretainedValue().imp.owner)
        // A reader without the lock may still be copying the old box.
        Runtime.state.retire { box.release() }
        return old
    }
}

/// An IMP and its owner, published together.
private final class IMPBox {
    let imp: IMP
    init(_ imp: IMP) { self.imp = imp }
}
