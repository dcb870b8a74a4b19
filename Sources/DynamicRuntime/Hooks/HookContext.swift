import CShims
import Glibc
import Synchronization

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

    func releaseReturnObject() {
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
