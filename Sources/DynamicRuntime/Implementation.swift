import CShims
import Synchronization

/// A method implementation: a C function pointer to cast and call with (receiver, selector,
/// arguments…). When the IMP is a libffi closure over a Swift closure, the value keeps that
/// closure alive, so an IMP returned by `replaceMethod` stays callable for as long as it is held.
public struct IMP: Hashable, @unchecked Sendable, CustomStringConvertible {
    /// The entry point.
    public let pointer: sf_imp
    let owner: ClosureIMP?

    /// Wraps a C function. The caller guarantees it matches the method's signature.
    public init(_ pointer: sf_imp) {
        self.pointer = pointer
        self.owner = nil
    }

    /// Wraps a C function given as a raw address (e.g. from `dlsym`).
    public init?(address: UnsafeRawPointer?) {
        guard let address else { return nil }
        self.init(unsafeBitCast(address, to: sf_imp.self))
    }

    init(pointer: sf_imp, owner: ClosureIMP?) {
        self.pointer = pointer
        self.owner = owner
    }

    /// The entry point as a raw address.
    public var address: UnsafeRawPointer { unsafeBitCast(pointer, to: UnsafeRawPointer.self) }

    /// Whether this IMP runs a Swift closure (a trampoline or libffi closure made by the runtime).
    public var isClosure: Bool { owner != nil }

    public static func == (a: IMP, b: IMP) -> Bool { a.address == b.address }
    public func hash(into hasher: inout Hasher) { hasher.combine(address) }
    public var description: String { "IMP(\(address))" }
}

/// The body a closure IMP runs: (return storage, argument pointers incl. self and _cmd).
@usableFromInline
typealias ClosureBody = (UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws -> Void

/// Turns a Swift closure into a C-callable IMP for one signature: a trampoline slot into the
/// register-spilling entry where the signature allows (x86-64), else a libffi closure.
final class ClosureIMP: @unchecked Sendable {
    /// The libffi closure, or nil for a trampoline.
    let closure: UnsafeMutableRawPointer?
    /// The spill entry's context (handler, owner, layout), or nil.
    let context: UnsafeMutablePointer<sf_tramp_context>?
    /// Whether calls enter through a trampoline slot (not a libffi closure).
    let isTrampoline: Bool
    let entry: sf_imp
    let signature: Signature
    let body: ClosureBody

    init(signature: Signature, body: @escaping ClosureBody) throws(RuntimeError) {
        self.signature = signature
        self.body = body
        if sf_tramp_enabled() != 0, let layout = signature.storage.layout {
            let code: UnsafeMutableRawPointer?
            let ints = Int(layout.pointee.int_only)
            if (2...5).contains(ints) {
                // Integer registers only: the slot hands this object to a thunk as the first
                // free argument register; every argument stays where the caller put it.
                self.context = nil
                code = sf_tramp_alloc_kind(Int32(ints - 1), nil, registerThunks[ints - 2])
            } else {
                let context = UnsafeMutablePointer<sf_tramp_context>.allocate(capacity: 1)
                context.initialize(to: sf_tramp_context(handler: trampolineEntry, owner: nil, layout: layout))
                self.context = context
                code = sf_tramp_alloc(context, unsafeBitCast(sf_tramp_entry as @convention(c) () -> Void, to: UnsafeRawPointer.self))
            }
            guard let code else {
                context?.deallocate()
                throw .implementationFailed(className: "-", selector: "-", reason: "no trampoline slot could be mapped")
            }
            self.closure = nil
            self.isTrampoline = true
            self.entry = unsafeBitCast(code, to: sf_imp.self)
            let me = Unmanaged.passUnretained(self).toOpaque()
            if let context { context.pointee.owner = me } else { sf_tramp_set_context(code, me) }
            sf_counter_closures_add(1)
            return
        }
        var code: UnsafeMutableRawPointer?
        guard let closure = sf_ffi_closure_alloc(&code), let code else {
            throw .implementationFailed(className: "-", selector: "-", reason: "libffi could not allocate a closure")
        }
        self.closure = closure
        self.context = nil
        self.isTrampoline = false
        self.entry = unsafeBitCast(code, to: sf_imp.self)
        let status = sf_ffi_prep_closure(closure, &signature.storage.raw.pointee.cif, closureEntry,
                                         Unmanaged.passUnretained(self).toOpaque(), code)
        guard status == FFI_OK else {
            sf_ffi_closure_free(closure)
            throw .implementationFailed(className: "-", selector: "-", reason: "libffi could not prepare a closure (status \(status.rawValue))")
        }
        sf_counter_closures_add(1)
    }

    deinit {
        if let closure {
            sf_ffi_closure_free(closure)
        } else {
            // The slot is reused only after a grace period; the context goes with this object,
            // which nothing can call any more (its owners let go after their own grace period).
            sf_tramp_free(unsafeBitCast(entry, to: UnsafeMutableRawPointer.self))
            context?.deallocate()
        }
        sf_counter_closures_add(-1)
    }

    var imp: IMP { IMP(pointer: entry, owner: self) }

    /// Runs the body for a call that could not reach it (errors cannot unwind through C).
    @inline(__always)
    func run(_ ret: UnsafeMutableRawPointer, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        do {
            try body(ret, args)
        } catch {
            // The caller gets zero and the sender the error. A C caller that called the IMP
            // itself reads it with sf_last_error().
            ret.initializeMemory(as: UInt8.self, repeating: 0, count: signature.storage.returnSize)
            let e = Runtime.wrap(error, args)
            e.record()
            Runtime.raise(e)
        }
    }
}

private let closureEntry: @convention(c) (
    UnsafeMutablePointer<ffi_cif>?, UnsafeMutableRawPointer?,
    UnsafeMutablePointer<UnsafeMutableRawPointer?>?, UnsafeMutableRawPointer?
) -> Void = { _, ret, args, userData in
    // The method table keeps the box alive for as long as the IMP is reachable.
    Unmanaged<ClosureIMP>.fromOpaque(userData!)._withUnsafeGuaranteedRef { $0.run(ret!, args!) }
}

/// What `sf_tramp_entry` calls: the argument vector points into the spilled registers and the
/// caller's stack, so nothing is copied and nothing allocated.
private let trampolineEntry: sf_tramp_handler = { context, frame in
    let context = context!.assumingMemoryBound(to: sf_tramp_context.self)
    let layout = context.pointee.layout!
    withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: Int(layout.pointee.nargs)) { args in
        let ret = sf_tramp_frame_args(frame, layout, args.baseAddress)!
        Unmanaged<ClosureIMP>.fromOpaque(context.pointee.owner!)._withUnsafeGuaranteedRef { $0.run(ret, args.baseAddress!) }
        sf_tramp_frame_return(frame, layout)
    }
}

/// The register-class thunks: (integer argument registers…, this object) for signatures whose
/// arguments are all integer scalars in registers, by count of registers (2-5).
nonisolated(unsafe) private let registerThunks: [UnsafeRawPointer] = [
    unsafeBitCast({ (a0, a1, c) in callBody(c!, a0, a1, 0, 0, 0) } as @convention(c) (UInt64, UInt64, UnsafeRawPointer?) -> UInt64,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ (a0, a1, a2, c) in callBody(c!, a0, a1, a2, 0, 0) } as @convention(c) (UInt64, UInt64, UInt64, UnsafeRawPointer?) -> UInt64,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ (a0, a1, a2, a3, c) in callBody(c!, a0, a1, a2, a3, 0) }
                  as @convention(c) (UInt64, UInt64, UInt64, UInt64, UnsafeRawPointer?) -> UInt64, to: UnsafeRawPointer.self),
    unsafeBitCast({ (a0, a1, a2, a3, a4, c) in callBody(c!, a0, a1, a2, a3, a4) }
                  as @convention(c) (UInt64, UInt64, UInt64, UInt64, UInt64, UnsafeRawPointer?) -> UInt64, to: UnsafeRawPointer.self),
]

/// Runs the body over the registers stored in this frame; the word it returns goes to %rax.
@inline(__always)
private func callBody(_ owner: UnsafeRawPointer, _ a0: UInt64, _ a1: UInt64, _ a2: UInt64, _ a3: UInt64, _ a4: UInt64) -> UInt64 {
    var words = (a0, a1, a2, a3, a4, UInt64(0), UInt64(0))  // arguments, then the return value
    return withUnsafeMutableBytes(of: &words) { w in
        let base = w.baseAddress!
        var argv: (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?,
                   UnsafeMutableRawPointer?) = (base, base + 8, base + 16, base + 24, base + 32)
        withUnsafeMutablePointer(to: &argv) { tuple in
            tuple.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 5) { args in
                Unmanaged<ClosureIMP>.fromOpaque(owner)._withUnsafeGuaranteedRef { $0.run(base + 40, args) }
            }
        }
        return (base + 40).load(as: UInt64.self)
    }
}

/// A method-table entry as Swift sees it. It owns its C struct and frees it in `deinit`:
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

/// A method of a class: its selector, signature and current implementation.
public struct Method: Hashable, @unchecked Sendable, CustomStringConvertible {
    let record: MethodRecord

    /// The method's name.
    public var selector: Selector { record.selector }
    /// The method's types.
    public var signature: Signature { record.signature }
    /// The class whose table holds this method.
    public var owningClass: RuntimeClass { record.owningClass }
    /// The current implementation (read atomically).
    public var implementation: IMP { Runtime.state.lock.withLock { record.imp } }
    /// The C handle, for the C API.
    public var raw: sf_method_t { record.raw }

    public static func == (a: Method, b: Method) -> Bool { a.record === b.record }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(record)) }
    public var description: String {
        "\(owningClass.isMetaclass ? "+" : "-")[\(owningClass.name) \(selector.name)] \(signature.encoding)"
    }
}
