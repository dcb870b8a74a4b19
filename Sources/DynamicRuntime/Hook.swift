import CShims
import Glibc
import Synchronization

/// Where a hook runs relative to the method's original implementation.
public enum HookPosition: Sendable, CustomStringConvertible {
    /// Before the original, in the order hooks were added; may change arguments.
    case before
    /// Around the original: the newest runs first and calls `proceed()` to run the next one
    /// (and finally the original); not calling it drops the call.
    case instead
    /// After the original, in the order hooks were added; sees and may change the return value.
    case after

    public var description: String {
        switch self {
        case .before: "before"
        case .instead: "instead"
        case .after: "after"
        }
    }
}

/// A handle to one installed hook. `remove()` uninstalls it; the method is restored exactly
/// (same IMP pointer) when its last hook goes.
public final class HookToken: Hashable, @unchecked Sendable, CustomStringConvertible {
    let id: UInt64
    let hook: MethodHook
    /// Where the hook runs.
    public let position: HookPosition

    init(id: UInt64, hook: MethodHook, position: HookPosition) {
        self.id = id
        self.hook = hook
        self.position = position
    }

    /// Whether the hook is still installed.
    public var isActive: Bool {
        Runtime.state.lock.withLock { hook.record?.hook === hook && hook.isInTable && hook.contains(id) }
    }

    /// Uninstalls the hook. Removing twice is harmless and returns false.
    @discardableResult
    public func remove() -> Bool { HookRegistry.remove(self) }

    public static func == (a: HookToken, b: HookToken) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "HookToken(\(position) -[\(hook.cls.name) \(hook.selector.name)])" }
}

/// One call as a hook sees it. Valid only while the hook runs: to keep the call, make an
/// `Invocation` with `makeInvocation()`.
public struct HookContext {
    let hook: MethodHook
    let chain: HookChain
    let arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    let returnStorage: UnsafeMutableRawPointer
    let state: UnsafeMutablePointer<HookCallState>

    /// The receiver.
    public var target: ObjectRef { ObjectRef(arguments[0]!.load(as: sf_id?.self)) }
    /// The selector that was sent.
    public var selector: Selector { hook.selector }
    /// The method's types.
    public var signature: Signature { hook.signature }
    /// The implementation the hook wraps (resolved now, for an inherited method).
    public var originalImplementation: IMP { hook.currentOriginal() }
    /// Whether the original (or the next instead-hook) has run for this call.
    public var didProceed: Bool { state.pointee.proceeded }

    private func check(_ index: Int, _ type: TypeEncoding) throws(RuntimeError) -> TypeEncoding {
        let types = hook.signature.argumentTypes
        guard index >= 0, index < types.count - 2 else {
            throw .invalidArgument(className: hook.cls.visibleName, selector: selector.name,
                                   reason: "argument index \(index) out of range 0..<\(types.count - 2)")
        }
        guard types[index + 2].isCompatible(with: type) else {
            throw .signatureMismatch(className: hook.cls.visibleName, selector: selector.name,
                                     expected: hook.signature.encoding, actual: "argument \(index) used as '\(type.encoding)'")
        }
        return types[index + 2]
    }

    /// Argument `index` (0 is the first after the selector), checked against the signature.
    public func argument<T: MessageArgument>(at index: Int, as _: T.Type = T.self) throws(RuntimeError) -> T {
        _ = try check(index, T.typeEncoding)
        return T(argumentStorage: arguments[index + 2]!)
    }

    /// Replaces argument `index` for the rest of this call (borrowed: keep objects alive).
    public func setArgument<T: MessageArgument>(_ value: T, at index: Int) throws(RuntimeError) {
        let want = try check(index, (value as? DynamicValue)?.typeEncoding ?? T.typeEncoding)
        try (value as? DynamicValue)?.checkByteCount(size: hook.signature.storage.argumentSizes[index + 2], of: want,
                                                     what: "argument \(index + 1)", className: hook.cls.visibleName,
                                                     selector: selector.name)
        value.storeArgument(to: arguments[index + 2]!)
    }

    /// All arguments after the selector, as dynamic values.
    public var argumentValues: [DynamicValue] {
        let types = hook.signature.argumentTypes
        return (2..<types.count).map { DynamicValue.load(types[$0], from: arguments[$0]!, isReturn: false) }
    }

    /// The return value so far (zero until the original runs or a hook sets it).
    public func returnValue<T: MessageReturn>(as _: T.Type = T.self) throws(RuntimeError) -> T {
        let sig = hook.signature
        guard sig.returnType.isCompatible(with: T.returnEncoding) else {
            throw .signatureMismatch(className: hook.cls.visibleName, selector: selector.name, expected: sig.encoding,
                                     actual: "return value read as '\(T.returnEncoding.encoding)'")
        }
        if sig.returnType == .object, let o = returnStorage.load(as: sf_id?.self) { sf_retain_inline(o) }
        return T(returnStorage: returnStorage)
    }

    /// The return value so far, as a dynamic value.
    public var returnValueDescription: DynamicValue {
        DynamicValue.load(hook.signature.returnType, from: returnStorage, isReturn: false)
    }

    /// Sets the value the caller receives.
    public func setReturnValue<T: MessageReturn>(_ value: T) throws(RuntimeError) {
        let sig = hook.signature
        guard sig.returnType.isCompatible(with: T.returnEncoding) else {
            throw .signatureMismatch(className: hook.cls.visibleName, selector: selector.name, expected: sig.encoding,
                                     actual: "return value set as '\(T.returnEncoding.encoding)'")
        }
        releaseReturnObject()
        value.storeReturn(to: returnStorage)
    }

    /// Sets the return value from a dynamic value of the right type.
    public func setReturnValue(_ value: DynamicValue) throws(RuntimeError) {
        guard hook.signature.returnType.isCompatible(with: value.typeEncoding) else {
            throw .signatureMismatch(className: hook.cls.visibleName, selector: selector.name, expected: hook.signature.encoding,
                                     actual: "return value set as '\(value.typeEncoding.encoding)'")
        }
        let sig = hook.signature
        try value.checkByteCount(size: Int(sf_ffi_type_size(sig.raw.pointee.return_type)), of: sig.returnType,
                                 what: "the return value", className: hook.cls.visibleName, selector: selector.name)
        releaseReturnObject()
        value.store(to: returnStorage, isReturn: true)
    }

    fileprivate func releaseReturnObject() {
        if hook.signature.returnType == .object, let o = returnStorage.load(as: sf_id?.self) {
            returnStorage.storeBytes(of: nil, as: sf_id?.self)
            sf_release_inline(o)
        }
    }

    /// Runs the next instead-hook, or the original; the result lands in the return value.
    public func proceed() throws(RuntimeError) {
        let next = state.pointee.insteadIndex
        if next < chain.instead.count {
            state.pointee.insteadIndex += 1
            try chain.instead[next].body(self)
        } else {
            try invokeOriginal()
        }
    }

    /// Runs the original implementation now, skipping any remaining instead-hooks.
    public func invokeOriginal() throws(RuntimeError) {
        state.pointee.proceeded = true
        releaseReturnObject()
        try hook.callOriginal(arguments, returnStorage)
    }

    /// A retained record of this call that can be replayed later, on any thread, after the
    /// caller has returned. Replaying calls the original implementation, not the hook.
    public func makeInvocation() -> Invocation {
        let inv = Invocation.capture(signature: hook.signature.storage, arguments: arguments)
        inv.storage.header.implementation = hook.currentOriginal()
        inv.retainArguments()
        return inv
    }

    /// Like `makeInvocation()`, but reuses `record` when it has this call's signature, so a
    /// steady stream of captured calls allocates nothing.
    public func capture(into record: inout Invocation?) {
        if record?.storage.header.signature === hook.signature.storage, isKnownUniquelyReferenced(&record!.storage) {
            let r = record!
            r.storage.refill(from: arguments)
            r.storage.header.implementation = hook.currentOriginal()
            r.retainArguments()
        } else {
            record = makeInvocation()
        }
    }
}

/// Per-call bookkeeping, on the trampoline's stack.
struct HookCallState {
    var insteadIndex = 0
    var proceeded = false
}

/// An immutable list of hooks for one method, replaced whole on every change.
final class HookChain: @unchecked Sendable {
    struct Entry {
        let id: UInt64
        let body: (HookContext) throws(RuntimeError) -> Void
    }

    let before: [Entry]
    /// Newest first.
    let instead: [Entry]
    let after: [Entry]

    init(before: [Entry] = [], instead: [Entry] = [], after: [Entry] = []) {
        self.before = before
        self.instead = instead
        self.after = after
    }

    var isEmpty: Bool { before.isEmpty && instead.isEmpty && after.isEmpty }

    func adding(_ e: Entry, at position: HookPosition) -> HookChain {
        switch position {
        case .before: HookChain(before: before + [e], instead: instead, after: after)
        case .instead: HookChain(before: before, instead: [e] + instead, after: after)
        case .after: HookChain(before: before, instead: instead, after: after + [e])
        }
    }

    func removing(_ id: UInt64) -> HookChain {
        HookChain(before: before.filter { $0.id != id }, instead: instead.filter { $0.id != id },
                  after: after.filter { $0.id != id })
    }

    func contains(_ id: UInt64) -> Bool {
        before.contains { $0.id == id } || instead.contains { $0.id == id } || after.contains { $0.id == id }
    }
}

/// The trampoline for one (class, selector): a libffi closure with the method's own `ffi_cif`
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
    private let originalBox = Atomic<UnsafeMutableRawPointer?>(nil)
    /// Set until the hook is retired (lock held or after the grace period). The trampoline holds
    /// the hook strongly: an invocation that kept the trampoline as its IMP can replay it later.
    var trampoline: ClosureIMP!
    /// The table entry the trampoline is installed in (lock held).
    var record: MethodRecord!

    init(cls: RuntimeClass, selector: Selector, signature: Signature, inherited: Bool, original: IMP) throws(RuntimeError) {
        self.cls = cls
        self.selector = selector
        self.signature = signature
        self.inherited = inherited
        slot = UnsafeMutableRawPointer.allocate(byteCount: sf_hook_slot_size(), alignment: 16)
            .assumingMemoryBound(to: sf_hook_slot.self)
        slot.initialize(to: sf_hook_slot())
        sf_hook_set_original(slot, inherited ? nil : original.pointer)
        if !inherited { originalBox.store(Unmanaged.passRetained(OriginalBox(original)).toOpaque(), ordering: .releasing) }
        let emptyChain = Unmanaged.passRetained(HookChain()).toOpaque()
        _ = sf_hook_swap_chain(slot, emptyChain)
        trampoline = try ClosureIMP(signature: signature) { [self] ret, args in
            try self.run(ret, args)
        }
    }

    deinit {
        if let chain = sf_hook_swap_chain(slot, nil) { Unmanaged<HookChain>.fromOpaque(chain).release() }
        if let box = originalBox.exchange(nil, ordering: .acquiring) { Unmanaged<OriginalBox>.fromOpaque(box).release() }
        slot.deallocate()
    }

    /// The wrapped IMP, nil while inherited (lock held).
    var original: IMP? {
        originalBox.load(ordering: .acquiring).map { Unmanaged<OriginalBox>.fromOpaque($0).takeUnretainedValue().imp }
    }

    /// Makes the hook wrap `imp` (a replaced method); returns what it wrapped. The old IMP is
    /// freed after a grace period: senders may be calling it (lock held).
    func replaceOriginal(with imp: IMP) -> IMP? {
        let previous = original
        sf_hook_set_original(slot, imp.pointer)
        let old = originalBox.exchange(Unmanaged.passRetained(OriginalBox(imp)).toOpaque(), ordering: .acquiringAndReleasing)
        inherited = false
        if let old { Runtime.state.retire { Unmanaged<OriginalBox>.fromOpaque(old).release() } }
        return previous
    }

    var chain: HookChain { Unmanaged<HookChain>.fromOpaque(sf_hook_chain(slot)!).takeUnretainedValue() }

    func contains(_ id: UInt64) -> Bool { chain.contains(id) }

    /// Whether the entry the trampoline is installed in is still in its class's table (lock
    /// held). Disposing a class (metaclass included) drops and frees its entries.
    var isInTable: Bool { !cls.isDisposed && record != nil && cls.methods[selector] === record }

    /// Publishes a new chain; the old one is freed after a grace period (lock held).
    func publish(_ new: HookChain) {
        let old = sf_hook_swap_chain(slot, Unmanaged.passRetained(new).toOpaque())!
        Runtime.state.retire { Unmanaged<HookChain>.fromOpaque(old).release() }
    }

    /// The trampoline body: before hooks, instead hooks or the original, after hooks.
    func run(_ ret: UnsafeMutableRawPointer, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws(RuntimeError) {
        sf_rcu_enter()
        defer { sf_rcu_exit() }
        let chain = Unmanaged<HookChain>.fromOpaque(sf_hook_chain(slot)!).takeUnretainedValue()
        ret.initializeMemory(as: UInt8.self, repeating: 0, count: signature.storage.returnSize)
        var state = HookCallState()
        try withUnsafeMutablePointer(to: &state) { (p) throws(RuntimeError) in
            let ctx = HookContext(hook: self, chain: chain, arguments: args, returnStorage: ret, state: p)
            do throws(RuntimeError) {
                for e in chain.before { try e.body(ctx) }
                try ctx.proceed()
                for e in chain.after { try e.body(ctx) }
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
        if let box = originalBox.load(ordering: .acquiring) {
            return Unmanaged<OriginalBox>.fromOpaque(box).takeUnretainedValue().imp
        }
        let m = sf_lookup_method(cls.lookupSuperclass!.raw, selector.raw)!
        return MethodRecord.from(m)?.imp ?? IMP(sf_method_imp(m)!)
    }

    /// Runs the original (the caller is in a read section).
    func callOriginal(_ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ ret: UnsafeMutableRawPointer) throws(RuntimeError) {
        let imp: sf_imp
        let owner: ClosureIMP?
        if let direct = sf_hook_original(slot) {
            imp = direct
            owner = originalBox.load(ordering: .acquiring).flatMap {
                Unmanaged<OriginalBox>.fromOpaque($0).takeUnretainedValue().imp.owner
            }
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
            do {
                try owner.body(ret, args)
            } catch {
                ret.initializeMemory(as: UInt8.self, repeating: 0, count: signature.storage.returnSize)
                let e = Runtime.wrap(error, args)
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

/// An IMP and the owner keeping it alive, published together.
private final class OriginalBox {
    let imp: IMP
    init(_ imp: IMP) { self.imp = imp }
}

extension RuntimeClass {
    /// The name users know: a hidden per-object class reports its superclass's.
    var visibleName: String { isHidden ? (superclass?.name ?? name) : name }
}
