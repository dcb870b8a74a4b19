import CDynamicRuntime

/// One call in progress as the C API hands it to a hook or a C-function method (`sf_call_t`).
/// It lives on the stack of the callback's caller and is linked into a per-thread list, so a
/// handle used after its callback returned, or on another thread, is found missing and refused.
struct CCall {
    /// Set for hook calls: `proceed` and the original implementation come from it.
    let hook: HookContext?
    /// A method body's signature, unretained (the caller holds it for the call); a hook call
    /// reads its hook's. No reference is retained: a CCall costs nothing to make or drop.
    private let bodySignature: ObjectWord<SignatureStorage>?
    // A method body's frame. A hook call reads its hook's, when the callback asks: a word
    // call builds its argument vector only then.
    private let bodyArguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    private let bodyReturnStorage: UnsafeMutableRawPointer?
    var previous: UnsafeMutableRawPointer?

    init(hook: HookContext) {
        self.hook = hook
        bodySignature = nil
        bodyArguments = nil
        bodyReturnStorage = nil
    }

    init(signature: Signature, arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>, returnStorage: UnsafeMutableRawPointer) {
        hook = nil
        bodySignature = ObjectWord(unretained: signature.storage)
        bodyArguments = arguments
        bodyReturnStorage = returnStorage
    }

    var arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?> { hook?.arguments ?? bodyArguments.unsafelyUnwrapped }
    var returnStorage: UnsafeMutableRawPointer { hook?.returnStorage ?? bodyReturnStorage.unsafelyUnwrapped }

    var signature: Signature { hook?.signature ?? Signature(storage: bodySignature!.object) }
    var target: sf_id? { arguments[0]!.load(as: sf_id?.self) }
    var selector: Selector { Selector(raw: arguments[1]!.load(as: sf_sel.self)) }
    var className: String { CAPIValues.className(of: target) }

    /// Runs `body` with this call published as a C handle.
    static func run(_ call: inout CCall, _ body: (sf_call_t) -> sf_status) -> sf_status {
        call.previous = sf_capi_calls()
        // Unprotected: the callback gets the handle, never a buffer to write into.
        return _withUnprotectedUnsafeMutablePointer(to: &call) { p in
            sf_capi_set_calls(p)
            defer { sf_capi_set_calls(p.pointee.previous) }
            return body(OpaquePointer(p))
        }
    }

    /// The call behind a handle, if it is in progress on this thread.
    static func find(_ handle: sf_call_t?) throws(RuntimeError) -> UnsafeMutablePointer<CCall> {
        guard let handle else { throw .nullArgument("a call") }
        var p = sf_capi_calls()
        while let q = p {
            if q == UnsafeMutableRawPointer(handle) { return q.assumingMemoryBound(to: CCall.self) }
            p = q.assumingMemoryBound(to: CCall.self).pointee.previous
        }
        throw .invalidArgument(.init(expected: "a call in progress on this thread", actual: "call \(handle) (used after its callback returned?)"))
    }

    /// The error a failed C callback raises for the sender, with the C side's own message.
    func callbackFailed(_ status: sf_status, what: String) -> RuntimeError {
        let detail = sf_last_error() == SF_OK ? "" : ": " + String(cString: sf_last_error_message())
        let reason = "\(what) returned status \(status.rawValue)\(detail)"
        return hook != nil
            ? .hookFailed(.init(className: className, selector: selector.name, reason: reason))
            : .implementationFailed(.init(className: className, selector: selector.name, reason: reason))
    }
}

/// Byte-level access to typed storage, with the size checks every C accessor shares.
enum CAPIValues {
    static func className(of obj: sf_id?) -> String {
        guard let obj, let c = sf_object_isa(obj) else { return "nil" }
        return RuntimeClass.from(c).visibleName
    }

    /// Checks `index` and `size` against the signature; returns the storage index (self is 0).
    static func argumentSlot(_ sig: Signature, _ index: Int, _ size: Int, className: String,
                             selector: String) throws(RuntimeError) -> Int {
        let n = sig.argumentTypes.count - 2
        guard index >= 0, index < n else {
            throw .invalidArgument(.init(className: className, selector: selector, expected: "an argument index in 0..<\(n) for '\(sig.encoding)'", actual: "\(index)"))
        }
        let actual = Int(sf_ffi_type_size(sig.raw.pointee.arg_types[index + 2]!))
        guard size == actual else {
            throw .signatureMismatch(.init(className: className, selector: selector, argument: index + 1, operation: "the C caller",
                                           expected: "\(actual) bytes ('\(sig.argumentTypes[index + 2].encoding)')", actual: "\(size) bytes"))
        }
        return index + 2
    }

    /// Checks `size` against the return type's size (0 for void).
    static func checkReturn(_ sig: Signature, _ size: Int, className: String, selector: String) throws(RuntimeError) {
        let actual = sig.returnType == .void ? 0 : Int(sf_ffi_type_size(sig.raw.pointee.return_type))
        guard size == actual else {
            throw .signatureMismatch(.init(className: className, selector: selector, operation: "the C caller",
                                           expected: "\(actual) bytes ('\(sig.returnType.encoding)')", actual: "\(size) bytes", isReturnValue: true))
        }
    }

    /// Checks an argument's transfer: the caller's buffer `value`, `index` and `size`; returns
    /// the buffer and the storage index.
    static func argument<P>(_ value: P?, _ sig: Signature, _ index: Int, _ size: Int, className: String,
                            selector: String) throws(RuntimeError) -> (P, Int) {
        let value = try nonNull(value, "value", className: className, selector: selector)
        return (value, try argumentSlot(sig, index, size, className: className, selector: selector))
    }

    /// Checks a return value's transfer; nil when there is nothing to copy (`size` 0, a void return).
    static func returnBuffer<P>(_ value: P?, _ sig: Signature, _ size: Int, className: String,
                                selector: String) throws(RuntimeError) -> P? {
        try checkReturn(sig, size, className: className, selector: selector)
        guard size > 0 else { return nil }
        return try nonNull(value, "value", className: className, selector: selector)
    }

    static func nonNull<T>(_ p: T?, _ what: String, className: String? = nil, selector: String? = nil) throws(RuntimeError) -> T {
        guard let p else { throw .nullArgument(what, className: className, selector: selector) }
        return p
    }
}

/// Runs a C entry point's body: success clears the thread's error, a failure records it and
/// returns `failure`.
@inline(__always)
func capi<T>(_ failure: T, _ body: () throws(RuntimeError) -> T) -> T {
    do {
        let v = try body()
        succeed()
        return v
    } catch {
        return fail(error, failure)
    }
}

/// `capi` for entry points that return a status.
@inline(__always)
func capiStatus(_ body: () throws(RuntimeError) -> Void) -> sf_status {
    do {
        try body()
        succeed()
        return SF_OK
    } catch {
        return fail(error, error.code)
    }
}
