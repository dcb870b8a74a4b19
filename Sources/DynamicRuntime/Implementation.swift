import CShims

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

    /// Whether this IMP is a libffi closure made by the runtime.
    public var isClosure: Bool { owner != nil }

    public static func == (a: IMP, b: IMP) -> Bool { a.address == b.address }
    public func hash(into hasher: inout Hasher) { hasher.combine(address) }
    public var description: String { "IMP(\(address))" }
}

/// The body a closure IMP runs: (return storage, argument pointers incl. self and _cmd).
typealias ClosureBody = (UnsafeMutableRawPointer, UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws -> Void

/// A libffi closure that turns a Swift closure into a C-callable IMP for one signature.
final class ClosureIMP: @unchecked Sendable {
    let closure: UnsafeMutableRawPointer
    let entry: sf_imp
    let signature: Signature
    let body: ClosureBody

    init(signature: Signature, body: @escaping ClosureBody) throws(RuntimeError) {
        var code: UnsafeMutableRawPointer?
        guard let closure = sf_ffi_closure_alloc(&code), let code else {
            throw .implementationFailed(className: "-", selector: "-", reason: "libffi could not allocate a closure")
        }
        self.closure = closure
        self.entry = unsafeBitCast(code, to: sf_imp.self)
        self.signature = signature
        self.body = body
        let status = sf_ffi_prep_closure(closure, &signature.storage.raw.pointee.cif, closureEntry,
                                         Unmanaged.passUnretained(self).toOpaque(), code)
        guard status == FFI_OK else {
            sf_ffi_closure_free(closure)
            throw .implementationFailed(className: "-", selector: "-", reason: "libffi could not prepare a closure (status \(status.rawValue))")
        }
        sf_counter_closures_add(1)
    }

    deinit {
        sf_ffi_closure_free(closure)
        sf_counter_closures_add(-1)
    }

    var imp: IMP { IMP(pointer: entry, owner: self) }
}

private let closureEntry: @convention(c) (
    UnsafeMutablePointer<ffi_cif>?, UnsafeMutableRawPointer?,
    UnsafeMutablePointer<UnsafeMutableRawPointer?>?, UnsafeMutableRawPointer?
) -> Void = { _, ret, args, userData in
    // The method table keeps the box alive for as long as the IMP is reachable.
    Unmanaged<ClosureIMP>.fromOpaque(userData!)._withUnsafeGuaranteedRef { box in
        do {
            try box.body(ret!, args!)
        } catch {
            // Errors cannot unwind through C frames: the caller gets zero and the sender the error.
            // A C caller that called the IMP itself reads it with sf_last_error().
            ret!.initializeMemory(as: UInt8.self, repeating: 0, count: box.signature.storage.returnSize)
            let e = Runtime.wrap(error, args!)
            e.record()
            Runtime.raise(e)
        }
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
    /// Keeps a closure IMP alive while it is installed.
    var owner: ClosureIMP?
    /// The hook whose trampoline is installed here, if any (lock held).
    var hook: MethodHook?

    init(selector: Selector, signature: Signature, imp: IMP, in cls: RuntimeClass) {
        raw = UnsafeMutableRawPointer.allocate(byteCount: sf_method_struct_size(), alignment: 16)
            .assumingMemoryBound(to: sf_method.self)
        sf_method_init(raw, selector.raw, imp.pointer, signature.raw, nil)
        self.selector = selector
        self.signature = signature
        self.owningClass = cls
        self.owner = imp.owner
        sf_method_set_owner(raw, Unmanaged.passUnretained(self).toOpaque())
    }

    /// The record behind a C method handle (valid while its class is not disposed).
    static func from(_ raw: sf_method_t) -> MethodRecord? {
        sf_method_owner(raw).map { Unmanaged<MethodRecord>.fromOpaque($0).takeUnretainedValue() }
    }

    deinit {
        raw.deallocate()
    }

    var imp: IMP { IMP(pointer: sf_method_imp(raw), owner: owner) }

    /// Swaps the IMP; the previous one is returned with its owner so that it stays callable.
    func exchange(with new: IMP) -> IMP {
        let oldOwner = owner
        owner = new.owner
        let old = sf_method_swap_imp(raw, new.pointer)!
        return IMP(pointer: old, owner: oldOwner)
    }
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
