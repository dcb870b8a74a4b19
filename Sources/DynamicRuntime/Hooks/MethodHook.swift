import CDynamicRuntime
import Glibc
import Synchronization

/// The trampoline for one (class, selector): a trampoline slot (or libffi closure) for the method's signature
/// that runs the chain around the original implementation.
@usableFromInline
final class MethodHook: @unchecked Sendable {
    let cls: RuntimeClass
    @usableFromInline let selector: Selector
    let signature: Signature
    // What the call path reads on every call, inline so that it is one load from the hook (the
    // typed send reaches the hook from its method entry, `sf_method.hook_bits`):
    /// The current immutable chain, retained; replaced whole (lock held), the old one retired.
    private let chainWord = PublishedObject<HookChain>()
    /// The current chain's first-instead box (`InsteadBody`, which names its chain), or 0 when
    /// the chain is not instead-only: a word call reads the box and the chain from it, one
    /// dependent load fewer than through the chain's header.
    let firstInstead = AtomicObjectWord<InsteadBody>()
    /// The original IMP (0 while inherited: looked up in the superclass on each call).
    let originalBits = Atomic<UInt>(0)
    /// The Swift closure whose own entry `originalBits` is, or 0 (decided when the original is
    /// published, not per call): its body runs on the caller's argument vector. Unretained: the
    /// published box keeps it until a grace period after it is replaced.
    let originalBody = AtomicObjectWord<ClosureIMP>()
    /// `originalBits` again when the original can be called as a plain C function of five
    /// whole words (wide arguments, no object return, not a closure that can throw), else 0:
    /// what `proceed()` calls from a word call.
    @usableFromInline let wordOriginalBits = Atomic<UInt>(0)
    /// True when the class did not define the method itself: the original is looked up in
    /// the superclass on each call, so later changes there are honoured (lock held).
    var inherited: Bool
    /// The original IMP with its owner, for `currentOriginal()`: one immutable box published
    /// atomically, so a sender reads a pointer and the owner keeping it alive without the lock.
    /// nil while inherited. `originalBits` (and `originalBodyBits`) hold the same for the call path.
    private let originalBox: PublishedIMP
    /// Set until the hook is retired (lock held or after the grace period). The trampoline holds
    /// the hook strongly: an invocation that kept the trampoline as its IMP can replay it later.
    var trampoline: ClosureIMP!
    /// The table entry the trampoline is installed in (lock held).
    var record: MethodRecord!
    /// For an entry of a hidden class: how many objects have hooks of their own on the
    /// selector; the entry goes when none has (lock held).
    var objectUsers = 0

    // Read on every call: fixed when the hook is made, so the call path reads plain constants.
    /// Bytes of return storage the chain clears before it runs.
    let returnSize: Int
    /// Whether the return value is an object the storage may own.
    let returnsObject: Bool
    /// The layout for calling the original directly (`sf_tramp_call_args`); nil: `ffi_call`.
    let directLayout: UnsafeMutablePointer<sf_tramp_layout>?
    /// How calls enter the hook, chosen from the signature when it is installed.
    let entry: HookEntryKind
    /// The argument count when every argument and the return (if any) fill whole integer
    /// registers (`int_wide`): the original is called as a plain C function. 0 otherwise.
    let wideArguments: Int
    /// Whether such a call returns a value.
    let wideReturn: Bool
    /// Whether the class is a hidden per-object one, whose chain runs inside its class's hook.
    let isHidden: Bool
    /// Whether typed sends run this hook over their argument words (`sendWords`): an
    /// integer-register entry. Other shapes go through the slot.
    let takesWords: Bool
    /// For a hidden class's entry: the hook of the visible class's method for the selector
    /// (unretained `MethodHook` bits, 0 when that method is not hooked). Resolved under the lock
    /// with the original (`originalBits`) whenever caches are flushed or the method changes.
    let classHook = AtomicObjectWord<MethodHook>()

    init(cls: RuntimeClass, selector: Selector, signature: Signature, inherited: Bool, original: IMP) throws(RuntimeError) {
        self.cls = cls
        self.selector = selector
        self.signature = signature
        self.inherited = inherited
        originalBox = PublishedIMP(inherited ? nil : original)
        isHidden = cls.isHidden
        returnSize = signature.storage.returnSize
        returnsObject = signature.returnType.isRetainedObject
        let trampolines = sf_tramp_enabled() != 0
        directLayout = trampolines ? signature.storage.layout : nil
        entry = trampolines ? HookEntryKind.choose(for: signature.storage.layout) : .libffi
        let wide = directLayout.map { $0.pointee.int_wide != 0 && $0.pointee.nargs <= 5 } ?? false
        wideArguments = wide ? Int(directLayout!.pointee.nargs) : 0
        wideReturn = wide && directLayout!.pointee.ret_kind != UInt8(SF_RET_VOID)
        if case .integerRegisters = entry { takesWords = true } else { takesWords = false }
        _ = chainWord.exchange(HookChain.empty())
        if !inherited { storeOriginal(original) }
        let me = UnsafeRawPointer(ObjectWord(unretained: self).pointer)
        // The register entries take this hook as their context; every other caller (the spill
        // entry, a hook above this one, a replayed invocation) runs the body. Typed sends reach
        // the hook from its method record (`sendWords`), not through the trampoline.
        trampoline = try ClosureIMP(signature: signature, registerEntry: entry.registerEntry(context: me), body: { [self] ret, args in
            try self.run(ret, args)
        })
    }

    /// Publishes the call path's words for `imp`, the closure first: a reader that sees one word
    /// new and the other old calls the old or the new original, either of which is safe.
    func storeOriginal(_ imp: IMP) {
        let body = imp.owner.flatMap { o in
            CFunction.bits(of: o.entry) == CFunction.bits(of: imp.pointer) ? o : nil
        }
        originalBody.store(body.map { ObjectWord(unretained: $0) })
        originalBits.store(CFunction.bits(of: imp.pointer), ordering: .releasing)
        let plain = wideArguments != 0 && !returnsObject && (body == nil || body!.entersAsPlainFunction)
        wordOriginalBits.store(plain ? CFunction.bits(of: imp.pointer) : 0, ordering: .releasing)
    }

    /// The current chain, unretained (in a read section, or lock held).
    var chainRef: ObjectWord<HookChain> { chainWord.loadNonNil() }

    /// The wrapped IMP, nil while inherited (lock held).
    var original: IMP? { originalBox.imp }

    /// Makes the hook wrap `imp` (a replaced method); returns what it wrapped. The old IMP is
    /// freed after a grace period: senders may be calling it (lock held).
    func replaceOriginal(with imp: IMP) -> IMP? {
        Runtime.state.lock.assertHeld()
        let previous = originalBox.exchange(imp) { storeOriginal(imp) }
        inherited = false
        return previous
    }

    var chain: HookChain { chainRef.object }

    func contains(_ id: UInt64) -> Bool { chain.contains(id) }

    /// Whether the entry the trampoline is installed in is still in its class's table (lock
    /// held). Disposing a class (metaclass included) drops and frees its entries.
    var isInTable: Bool { !cls.isDisposed && record != nil && cls.methods[selector] === record }

    /// Publishes a new chain; the old one is freed after a grace period (lock held).
    func publish(_ new: HookChain) {
        Runtime.state.lock.assertHeld()
        chainWord.publish(new)
        firstInstead.store(new.withUnsafeMutablePointerToHeader { $0.pointee.firstInstead })
    }

    /// The box holding the original IMP now, retained; nil while inherited.
    func currentOriginalBox() -> IMPBox? {
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        return originalBox.retainedBox
    }

    /// Whether `box` is the published original's box (see `PublishedIMP.isPublished`).
    @inline(__always)
    func isCurrentOriginal(_ box: ObjectWord<IMPBox>) -> Bool { originalBox.isPublished(box) }

    /// The original IMP now (an inherited one is looked up in the superclass).
    func currentOriginal() -> IMP {
        // No lock: a box replaced meanwhile is released only after this read section.
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        if let imp = originalBox.imp { return imp }
        let m = sf_lookup_method(cls.lookupSuperclass!.raw, selector.raw)!
        return MethodRecord.from(m)?.imp ?? IMP(sf_method_imp(m)!)
    }
}
